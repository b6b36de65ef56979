# spectr-fig5-uniform.gp — Sun et al. 2023 (SpecTr) Fig. 5: the optimal acceptance
# probability α_k against the number of drafts k, for draft p = U(120) and
# target q = U(d_q).
# Data: spectr-fig5-uniform.dat (d_q = 60 30 12 6, as below).
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'spectr-fig5-uniform.png'
dat = 'spectr-fig5-uniform.dat'
dqs = "60 30 12 6"
colors = "#1f77b4 #ff7f0e #2ca02c #d62728"

set title "Optimal k-draft acceptance α_k, draft p = U(120), target q = U(d_q) (uniform on d_q of the 120 tokens)\nlines: α_k = 1 - (1 - d_q/120)^k; points: Monte-Carlo of k-Seq, which attains it here (error bars: 95% intervals)"
set xlabel "number of drafts k"
set ylabel "acceptance probability α_k"
set grid
set xrange [0:31]
set yrange [0:1.02]
set key bottom right box opaque
plot for [j=0:3] dat index '[exact]' using 1:(column(2+2*j)) with lines lw 2 lc rgb word(colors, j+1) title sprintf('d_q = %s: α_k (sorted-prefix formula)', word(dqs, j+1)), \
     for [j=0:3] '' index '[mc]' using 1:(column(2+3*j)):(column(3+3*j)):(column(4+3*j)) with yerrorbars pt 7 ps 1 lc rgb word(colors, j+1) notitle
