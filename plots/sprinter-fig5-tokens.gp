# sprinter-fig5-tokens.gp — Zhong et al. 2025 (SPRINTER) Fig. 5: expected number of tokens
# the cheap verifier lets through before it first calls the target, against
# its true-positive rate η_TP, for η_FP = 0 and 0.5, with r = 5 acceptable
# tokens ahead (Theorem 3.3).
# Data: sprinter-fig5-tokens.dat.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'sprinter-fig5-tokens.png'
dat = 'sprinter-fig5-tokens.dat'
r = 5

set title "SPRINTER: expected tokens E[N] accepted by the cheap verifier before it calls the target,\nwith r = 5 acceptable draft tokens ahead (Theorem 3.3; points: Monte-Carlo of the sprinter verifier ± 95%)"
set xlabel "verifier true-positive rate η_{TP}"
set ylabel "expected tokens E[N]"
set grid
set xrange [0:1]
set yrange [0:6.5]
set key top left box opaque
plot dat index '[mc]' using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc rgb '#1f77b4' notitle, \
     '' index '[mc]' using 1:6:7 with filledcurves fs transparent solid 0.25 noborder lc rgb '#d62728' notitle, \
     '' index '[exact]' using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'η_{FP} = 0, exact', \
     '' index '[exact]' using 1:3 with lines lw 2 lc rgb '#d62728' title 'η_{FP} = 0.5, exact (gap to η_{FP} = 0 stays ≤ 1)', \
     r with lines lw 1.5 dt 3 lc rgb 'black' title 'r = 5 acceptable tokens', \
     '' index '[mc]' using 1:2:3:4 with yerrorbars pt 7 ps 0.8 lc rgb '#1f77b4' title 'η_{FP} = 0, Monte-Carlo', \
     '' index '[mc]' using 1:5:6:7 with yerrorbars pt 5 ps 0.8 lc rgb '#d62728' title 'η_{FP} = 0.5, Monte-Carlo'
