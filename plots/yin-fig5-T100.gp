# yin-fig5-T100.gp — Yin et al. 2024, Fig. 5: the experiment of Fig. 2 at
# horizon T = 100: speculative decoding, batch SD with M = 2, and rejections
# against M.
# Data: yin-fig5-T100.dat, written by `simdec plot yin-fig5-T100`.
set terminal pngcairo size 1800,650 font "DejaVu Sans,12" enhanced
set output 'yin-fig5-T100.png'
dat = 'yin-fig5-T100.dat'
stats dat index '[exact-M1]' using 2 nooutput
ex1 = STATS_max
stats dat index '[exact-M2]' using 2 nooutput
ex2 = STATS_max
stats dat index '[vsM-limit]' using 2 nooutput
lim = STATS_max

set multiplot layout 1,3 title "(Batch) speculative decoding on Yin et al.'s 7-token chain at horizon T = 100 (the paper states no value)" font ",14"
set grid
set key top right box opaque
set logscale x
set xrange [10:*]
set xlabel "number of trials (generations of T = 100 tokens)"
set ylabel "rejections per generation, running mean of N_{rej}"
set title "(a) speculative decoding vs Theorem 1"
plot dat index '[mc-M1]' using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc rgb '#2ca02c' title 'Monte-Carlo 95% band', \
     '' index '[mc-M1]' using 1:2 with lines lw 2 lc rgb '#2ca02c' title 'Monte-Carlo running mean', \
     '' index '[exact-M1]' using 1:2 with lines lw 2.5 dt 2 lc rgb '#ff7f0e' title sprintf('Theorem 1: %.3f', ex1)
set title "(b) batch speculative decoding, M = 2, vs Theorem 3"
plot dat index '[mc-M2]' using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc rgb '#9467bd' title 'Monte-Carlo 95% band', \
     '' index '[mc-M2]' using 1:2 with lines lw 2 lc rgb '#9467bd' title 'Monte-Carlo running mean', \
     '' index '[exact-M2]' using 1:2 with lines lw 2.5 dt 2 lc rgb '#e377c2' title sprintf('Theorem 3: %.3f', ex2)
unset logscale x
set yrange [lim - 0.5:*]
set title "(c) expected rejections against the batch size M"
set xlabel "batch size M"
set ylabel "expected rejections per generation, E[N_{rej}]"
set xrange [0:31]
plot dat index '[vsM-exact]' using 1:2 with linespoints lw 2 pt 7 ps 0.7 lc rgb '#1f77b4' title 'exact, Theorem 3 (M = 1: Theorem 1)', \
     '' index '[vsM-mc]' using 1:2:3:4 with yerrorbars pt 6 ps 1.4 lw 1.5 lc rgb '#d62728' title 'Monte-Carlo ± 95%', \
     '' index '[vsM-limit]' using 1:2 with lines lw 2 dt 2 lc rgb '#2ca02c' title sprintf('M → ∞: %.3f', lim)
unset multiplot
