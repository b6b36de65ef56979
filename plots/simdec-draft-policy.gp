# simdec-draft-policy.gp — speed-up of token-level SD against the threshold
# of the draft-length policies (SpecDec++: stop once P(some draft rejected)
# > H; entropy rule of SVIP / AdaEDL: stop before a draft row of entropy > H,
# plotted at H / log V), beside the best fixed gamma and the optimal
# stopping rule; exact values, cost S = T / (E[calls] + c E[draft tokens]).
# Data: simdec-draft-policy.dat, written by `simdec plot simdec-draft-policy`.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'simdec-draft-policy.png'
dat = 'simdec-draft-policy.dat'

set title "Speed-up vs draft-policy threshold (V = 4, T = 30, cap γ = 5, c = 0.1)"
set xlabel "threshold: H (specdecpp) or H / log V (entropy)"
set ylabel "speed-up"
set grid
set xrange [0:1]
set key at graph 0.98, graph 0.55 right box opaque
plot dat index '[specdecpp]' using 1:3 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'specdecpp:H', \
     '' index '[entropy]' using 1:3 with linespoints lw 2 pt 5 lc rgb '#d62728' title 'entropy:H', \
     '' index '[reference]' using 1:2 with lines lw 2 dt 2 lc rgb '#2ca02c' title 'best fixed γ', \
     '' index '[reference]' using 1:4 with lines lw 2 dt 3 lc rgb '#000000' title 'optimal stopping rule'
