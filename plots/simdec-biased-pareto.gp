# simdec-biased-pareto.gp — simdec's own figure: output bias of the biased
# verifier (Yin et al. 2024, §4) against its rejection rate, with the optimal residual
# (opt, Theorem 4) and with the target as residual (uno), beside the Pareto
# line of Theorem 5.
# Data: simdec-biased-pareto.dat.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'simdec-biased-pareto.png'
dat = 'simdec-biased-pareto.dat'
stats dat index '[front]' using 2 nooutput
TV = STATS_max

set title sprintf("Biased verifier b = min(1,(q+ε)/p) on one token of the 7-token chain (TV(p,q) = %.3f), ε from 0 to max(p-q):\nthe optimal residual stays on the Pareto line; the target as residual (uno) is biased even at ε = 0", TV)
set xlabel "rejection probability P(reject)"
set ylabel "output bias TV(P_A, q)"
set grid
set xrange [0:1.05*TV]
set yrange [0:1.05*TV]
set key bottom left box opaque
plot dat index '[front]' using 1:2:(1.05*TV) with filledcurves fs transparent solid 0.15 noborder lc rgb '#1f77b4' title 'attainable region', \
     '' index '[front]' using 1:2 with lines lw 2.5 lc rgb 'black' title 'Pareto front (Theorem 5)', \
     '' index '[exact]' using 2:4 with lines lw 2 lc rgb '#d62728' title 'residual = target q (uno), exact', \
     '' index '[mc-opt]' using 2:5:3:4:6:7 with xyerrorbars pt 7 ps 1.2 lc rgb '#1f77b4' title 'optimal residual (opt), Monte-Carlo ± 95%', \
     '' index '[mc-uno]' using 2:5:3:4:6:7 with xyerrorbars pt 5 ps 1.2 lc rgb '#d62728' title 'residual = target q (uno), Monte-Carlo ± 95%'
