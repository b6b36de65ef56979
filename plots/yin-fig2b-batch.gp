# yin-fig2b-batch.gp — Yin et al. 2024, Fig. 2(b): running mean of the
# rejections of batch speculative decoding with M = 4 and M = 5 drafts,
# beside Theorem 3's exact values.
# Data: yin-fig2b-batch.dat, written by `simdec plot yin-fig2b-batch`.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'yin-fig2b-batch.png'
dat = 'yin-fig2b-batch.dat'
stats dat index '[exact-M4]' using 2 nooutput
ex4 = STATS_max
stats dat index '[exact-M5]' using 2 nooutput
ex5 = STATS_max

set title "Batch speculative decoding (M drafts per iteration) on Yin et al.'s 7-token chain, T = 50:\nrunning means of rejections converge to Theorem 3's exact values (the paper draws them without stating them)"
set xlabel "number of trials (independent generations of T = 50 tokens)"
set ylabel "rejections per generation, running mean of N_{rej}"
set logscale x
set xrange [10:*]
set grid
set key top right box opaque
plot dat index '[mc-M4]' using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb '#2ca02c' title 'M = 4: Monte-Carlo 95% band', \
     '' index '[mc-M4]' using 1:2 with lines lw 2 lc rgb '#2ca02c' title 'M = 4: Monte-Carlo running mean', \
     '' index '[exact-M4]' using 1:2 with lines lw 2.5 dt 2 lc rgb '#ff7f0e' title sprintf('M = 4: exact, Theorem 3: %.3f', ex4), \
     '' index '[mc-M5]' using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb '#9467bd' title 'M = 5: Monte-Carlo 95% band', \
     '' index '[mc-M5]' using 1:2 with lines lw 2 lc rgb '#9467bd' title 'M = 5: Monte-Carlo running mean', \
     '' index '[exact-M5]' using 1:2 with lines lw 2.5 dt 2 lc rgb '#e377c2' title sprintf('M = 5: exact, Theorem 3: %.3f', ex5)
