# simdec-speedup-vs-gamma.gp — expected wall-clock speed-up over target-only
# decoding against the draft length γ, token / block / batch (M = 2), at two
# draft/target cost ratios c, on the default chain (cost model of Leviathan
# et al. 2023, §3.4, with every draft of a multi-draft verifier paid for).
# Data: simdec-speedup-vs-gamma.dat, written by `simdec plot simdec-speedup-vs-gamma`.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'simdec-speedup-vs-gamma.png'
dat = 'simdec-speedup-vs-gamma.dat'

set title "Expected speed-up over target-only decoding vs draft length γ\n(default chain V = 7, T = 50; c = cost of one draft token in target calls)"
set xlabel "γ (draft tokens per iteration)"
set ylabel "speed-up"
set grid
set xrange [0.5:12.5]
set xtics 1
set key top left box opaque
plot dat index '[c=0.05]' using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'token, c = 0.05 (exact)', \
     '' index '[c=0.05]' using 1:5:6:7 with yerrorlines lw 2 pt 5 lc rgb '#d62728' title 'block, c = 0.05', \
     '' index '[c=0.05]' using 1:8:9:10 with yerrorlines lw 2 pt 9 lc rgb '#2ca02c' title 'batch M = 2, c = 0.05', \
     '' index '[c=0.2]' using 1:2 with linespoints lw 2 dt 2 pt 6 lc rgb '#1f77b4' title 'token, c = 0.2 (exact)', \
     '' index '[c=0.2]' using 1:5:6:7 with yerrorlines lw 2 dt 2 pt 4 lc rgb '#d62728' title 'block, c = 0.2', \
     '' index '[c=0.2]' using 1:8:9:10 with yerrorlines lw 2 dt 2 pt 8 lc rgb '#2ca02c' title 'batch M = 2, c = 0.2'
