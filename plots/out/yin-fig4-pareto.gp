# yin-fig4-pareto.gp — Yin et al. 2024, Fig. 4: the Pareto front between the
# rejection probability and the output bias TV(P_A, q) of a one-token
# verifier (Theorems 4, 5), on one token of the 7-token chain.
# Data: yin-fig4-pareto.dat, written by `simdec plot yin-fig4-pareto`.
set terminal pngcairo size 1800,650 font "DejaVu Sans,12" enhanced
set output 'yin-fig4-pareto.png'
dat = 'yin-fig4-pareto.dat'
stats dat index '[front]' using 2 nooutput
TV = STATS_max

set multiplot layout 1,3 title sprintf("Rejection probability vs output bias for one token (p = p_1(·|0), q = q_1(·|0) of the 7-token chain, TV(p,q) = %.3f)", TV) font ",14"
set grid
set key top right box opaque

# (a) attainable region: every verifier lies on or above the front.
set title "(a) attainable region; front from the Pareto LP"
set xlabel "rejection probability P(reject)"
set ylabel "output bias TV(P_A, q)"
set xrange [0:1]
set yrange [0:1.6*TV]
plot dat index '[lp]' using 1:2:(1.6*TV) with filledcurves fs transparent solid 0.3 noborder lc rgb '#1f77b4' title 'attainable', \
     '' index '[lp]' using 1:(0):2 with filledcurves fs transparent solid 0.3 noborder lc rgb '#d62728' title 'unattainable', \
     '' index '[front]' using 1:2 with lines lw 2.5 lc rgb 'black' title 'Theorem 5: P(reject) + bias = TV', \
     '' index '[lp]' using 1:2 with points pt 6 ps 1.3 lc rgb '#ff7f0e' title 'least bias by LP (GLPK)', \
     '+' using (0):(TV) every ::0::0 with points pt 7 ps 2 lc rgb '#2ca02c' title 'speculative decoding (0, TV)'

# (b) the rule b = min(1, (q+ε)/p) with the optimal residual, swept over ε.
set title "(b) b = min(1,(q+ε)/p) with the optimal residual, ε swept"
set xrange [0:1.1*TV]
set yrange [0:1.1*TV]
set key top right box opaque
set cblabel "over-acceptance ε"
set palette defined (0 '#440154', 1 '#21908d', 2 '#fde725')
plot dat index '[front]' using 1:2:(1.1*TV) with filledcurves fs transparent solid 0.2 noborder lc rgb '#1f77b4' title 'attainable', \
     '' index '[front]' using 1:2 with lines lw 2 lc rgb 'black' title 'Pareto front (Theorem 5)', \
     '' index '[eps]' using 2:3:1 with points pt 7 ps 1.2 palette title 'exact (Theorem 4), colour = ε', \
     '' index '[mc]' using 2:5:3:4:6:7 with xyerrorbars pt 6 ps 1.6 lc rgb '#d62728' title 'Monte-Carlo (biased verifier) ± 95%'
unset colorbox

# (c) both coordinates against ε.
set title "(c) rejection and bias against ε: their sum stays TV(p,q)"
set xlabel "over-acceptance ε"
set ylabel "probability / TV distance"
set autoscale x
set yrange [0:1.75*TV]
set key top right box opaque
plot dat index '[mc]' using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc rgb '#1f77b4' notitle, \
     '' index '[mc]' using 1:6:7 with filledcurves fs transparent solid 0.25 noborder lc rgb '#ff7f0e' notitle, \
     '' index '[eps]' using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'P(reject), exact', \
     '' index '[eps]' using 1:3 with lines lw 2 lc rgb '#ff7f0e' title 'least bias Loss*_{TV}, Theorem 4', \
     '' index '[eps]' using 1:4 with lines lw 2 dt 2 lc rgb 'black' title 'sum = TV(p,q)', \
     '' index '[mc]' using 1:2:3:4 with yerrorbars pt 7 ps 0.8 lc rgb '#1f77b4' title 'P(reject), Monte-Carlo ± 95%', \
     '' index '[mc]' using 1:5:6:7 with yerrorbars pt 7 ps 0.8 lc rgb '#ff7f0e' title 'bias, Monte-Carlo ± 95%'
unset multiplot
