# yin-fig2a-sd.gp — Yin et al. 2024, Fig. 2(a): running mean of the rejections
# of speculative decoding over trials, beside Theorem 1's exact value.
# Data: yin-fig2a-sd.dat, written by `simdec plot yin-fig2a-sd`.
# Restyle freely, then run `gnuplot yin-fig2a-sd.gp` in the directory of the data.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'yin-fig2a-sd.png'
dat = 'yin-fig2a-sd.dat'
stats dat index '[exact-M1]' using 2 nooutput
ex = STATS_max

set title "Speculative decoding (token verifier) on Yin et al.'s 7-token chain (App. F, drawn as numpy draws it), T = 50:\nthe running mean of rejections converges to Theorem 1's exact value (the paper: 16.41, acceleration 50/16.41 = 3.05)"
set xlabel "number of trials (independent generations of T = 50 tokens)"
set ylabel "rejections per generation, running mean of N_{rej}"
set logscale x
set xrange [10:*]
set grid
set key top right box opaque
plot dat index '[mc-M1]' using 1:3:4 with filledcurves fs transparent solid 0.25 noborder lc rgb '#2ca02c' title 'Monte-Carlo 95% confidence band', \
     '' index '[mc-M1]' using 1:2 with lines lw 2 lc rgb '#2ca02c' title 'Monte-Carlo running mean', \
     '' index '[exact-M1]' using 1:2 with lines lw 2.5 dt 2 lc rgb '#ff7f0e' title sprintf('exact E[N_{rej}], Theorem 1: %.3f (paper: 16.41)', ex)
