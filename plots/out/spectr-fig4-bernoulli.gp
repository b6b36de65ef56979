# spectr-fig4-bernoulli.gp — Sun et al. 2023 (SpecTr) Fig. 4: acceptance probability of
# the optimal k-draft selection OTM-k vs SpecTr's k-Seq, for draft
# p = Ber(0.25) and target q = Ber(b).
# Data: spectr-fig4-bernoulli.dat (k = 2 4 8, as below).
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'spectr-fig4-bernoulli.png'
dat = 'spectr-fig4-bernoulli.dat'
ks = "2 4 8"
colors = "#1f77b4 #ff7f0e #2ca02c"

set title "Probability that one of k drafts is accepted, draft p = Ber(0.25), target q = Ber(b):\nthe optimal transport OTM-k (solid) vs k-Seq (dashed; points: Monte-Carlo of the spectr verifier ± 95%)"
set xlabel "target parameter b = q(token 1)"
set ylabel "acceptance probability"
set grid
set xrange [0:1]
set yrange [*:1.01]
set key bottom left box opaque
plot for [j=0:2] dat index '[mc]' using 1:(column(3+3*j)):(column(4+3*j)) with filledcurves fs transparent solid 0.2 noborder lc rgb word(colors, j+1) notitle, \
     for [j=0:2] '' index '[exact]' using 1:(column(2+2*j)) with lines lw 2 lc rgb word(colors, j+1) title sprintf('k = %s, OTM-k (optimal)', word(ks, j+1)), \
     for [j=0:2] '' index '[exact]' using 1:(column(3+2*j)) with lines lw 2 dt 2 lc rgb word(colors, j+1) title sprintf('k = %s, k-Seq', word(ks, j+1)), \
     for [j=0:2] '' index '[mc]' using 1:(column(2+3*j)):(column(3+3*j)):(column(4+3*j)) with yerrorbars pt 7 ps 0.7 lc rgb word(colors, j+1) notitle
