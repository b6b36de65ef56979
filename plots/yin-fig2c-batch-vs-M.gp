# yin-fig2c-batch-vs-M.gp — Yin et al. 2024, Fig. 2(c): expected rejections of
# batch speculative decoding against the batch size M, with the M -> infinity
# limit (Proposition 1).
# Data: yin-fig2c-batch-vs-M.dat, written by `simdec plot yin-fig2c-batch-vs-M`.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'yin-fig2c-batch-vs-M.png'
dat = 'yin-fig2c-batch-vs-M.dat'
stats dat index '[vsM-limit]' using 2 nooutput
lim = STATS_max

set title "Batch speculative decoding on Yin et al.'s 7-token chain, T = 50: more drafts reduce rejections,\nbut only down to a positive limit as M → ∞ (the paper's M = 1 point: 16.41)"
set xlabel "batch size M (drafts per iteration)"
set ylabel "expected rejections per generation, E[N_{rej}]"
set grid
set xrange [0:31]
set yrange [lim - 0.5:*]
set key top right box opaque
plot dat index '[vsM-exact]' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#1f77b4' title 'exact, Theorem 3 (M = 1: Theorem 1)', \
     '' index '[vsM-mc]' using 1:2:3:4 with yerrorbars pt 6 ps 1.5 lw 1.5 lc rgb '#d62728' title 'Monte-Carlo (batch verifier) with 95% interval', \
     '' index '[vsM-limit]' using 1:2 with lines lw 2 dt 2 lc rgb '#2ca02c' title sprintf('limit M → ∞ (Proposition 1): %.3f', lim), \
     '' index '[vsM-exact]' every ::0::0 using 1:2 with points pt 7 ps 2.5 lc rgb 'black' title 'M = 1: plain speculative decoding', \
     '+' using (1):(16.41) every ::0::0 with points pt 2 ps 3 lw 2 lc rgb '#ff7f0e' title 'the paper: (1, 16.41)'
