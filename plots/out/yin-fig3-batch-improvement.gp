# yin-fig3-batch-improvement.gp — Yin et al. 2024, Fig. 3 right: single-token
# batch improvement BI = TV(q,p) - prod_{m<=M} TV(q^m,p) against the batch size M.
# Data: yin-fig3-batch-improvement.dat (blocks ber1..3 and uni1..3; the
# parameters below must match the header of the data file).
set terminal pngcairo size 1600,700 font "DejaVu Sans,13" enhanced
set output 'yin-fig3-batch-improvement.png'
dat = 'yin-fig3-batch-improvement.dat'
us = "0.6 0.75 0.9"
rs = "2 4 10"
colors = "#1f77b4 #ff7f0e #2ca02c"

set multiplot layout 1,2 title "Batch improvement: how much M drafts lower the rejection probability of one token (lines exact, points Monte-Carlo ± 95%)" font ",15"
set grid
set xlabel "batch size M"
set ylabel "batch improvement BI"
set xrange [0.5:20.5]
set key bottom right box opaque
set title "Bernoulli: target q = Ber(0.5), draft p = Ber(u)"
plot for [i=1:3] dat index sprintf('[ber%d-mc]', i) using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb word(colors, i) notitle, \
     for [i=1:3] '' index sprintf('[ber%d-exact]', i) using 1:2 with lines lw 2 lc rgb word(colors, i) title sprintf('u = %s: exact |u-0.5|(1-u^{M-1})', word(us, i)), \
     for [i=1:3] '' index sprintf('[ber%d-mc]', i) using 1:2:3:4 with yerrorbars pt 7 ps 0.9 lc rgb word(colors, i) notitle
set title "Uniform: draft p = Unif(60), target q = Unif(60/r)"
plot for [i=1:3] dat index sprintf('[uni%d-mc]', i) using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb word(colors, i) notitle, \
     for [i=1:3] '' index sprintf('[uni%d-exact]', i) using 1:2 with lines lw 2 lc rgb word(colors, i) title sprintf('r = %s: exact (1-1/r) - (1-1/r)^M', word(rs, i)), \
     for [i=1:3] '' index sprintf('[uni%d-mc]', i) using 1:2:3:4 with yerrorbars pt 7 ps 0.9 lc rgb word(colors, i) notitle
unset multiplot
