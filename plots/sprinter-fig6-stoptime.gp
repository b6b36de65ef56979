# sprinter-fig6-stoptime.gp — Zhong et al. 2025 (SPRINTER) Fig. 6: expected stopping time
# E[T_stop] = t_d (E[N] + 1) against the true-positive rate η_TP, for
# η_FP = 0 and 0.5, r = 5, draft time per token t_d = 0.1 (Theorem 3.4).
# Data: sprinter-fig6-stoptime.dat.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'sprinter-fig6-stoptime.png'
dat = 'sprinter-fig6-stoptime.dat'
r = 5
td = 0.1

set title "SPRINTER: expected time until the cheap verifier first calls the target, r = 5, t_d = 0.1 per drafted token\n(Theorem 3.4; points: Monte-Carlo of the sprinter verifier ± 95%)"
set xlabel "verifier true-positive rate η_{TP}"
set ylabel "expected stopping time E[T_{stop}]"
set grid
set xrange [0:1]
set yrange [0:0.75]
set key top left box opaque
plot dat index '[mc]' using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc rgb '#1f77b4' notitle, \
     '' index '[mc]' using 1:6:7 with filledcurves fs transparent solid 0.25 noborder lc rgb '#d62728' notitle, \
     '' index '[exact]' using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'η_{FP} = 0, exact', \
     '' index '[exact]' using 1:3 with lines lw 2 lc rgb '#d62728' title 'η_{FP} = 0.5, exact (gap to η_{FP} = 0 stays ≤ t_d)', \
     td*(r+1) with lines lw 1.5 dt 3 lc rgb 'black' title 't_d (r + 1)', \
     '' index '[mc]' using 1:2:3:4 with yerrorbars pt 7 ps 0.8 lc rgb '#1f77b4' title 'η_{FP} = 0, Monte-Carlo', \
     '' index '[mc]' using 1:5:6:7 with yerrorbars pt 5 ps 0.8 lc rgb '#d62728' title 'η_{FP} = 0.5, Monte-Carlo'
