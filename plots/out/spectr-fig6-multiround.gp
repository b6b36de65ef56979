# spectr-fig6-multiround.gp — Sun et al. 2023 (SpecTr) Fig. 6: acceptance probability of
# OTM-k vs k-Seq vs multi-round (recursive rejection sampling, SpecInfer), for
# draft p = Ber(0.25) and target q = Ber(b), k = 2 and 4.
# Data: spectr-fig6-multiround.dat.
set terminal pngcairo size 1600,700 font "DejaVu Sans,13" enhanced
set output 'spectr-fig6-multiround.png'
dat = 'spectr-fig6-multiround.dat'
ks = "2 4"

set multiplot layout 1,2 title "k-draft acceptance, draft p = Ber(0.25), target q = Ber(b): OTM-k ≥ k-Seq ≥ multi-round (lines exact, points Monte-Carlo ± 95%)" font ",14"
set xlabel "target parameter b = q(token 1)"
set ylabel "acceptance probability"
set grid
set xrange [0:1]
set yrange [*:1.01]
set key bottom left box opaque
do for [j=0:1] {
    set title sprintf('k = %s drafts', word(ks, j+1))
    plot dat index '[mc]' using 1:(column(3+6*j)):(column(4+6*j)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#ff7f0e' notitle, \
         '' index '[mc]' using 1:(column(6+6*j)):(column(7+6*j)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2ca02c' notitle, \
         '' index '[exact]' using 1:(column(2+3*j)) with lines lw 2.5 lc rgb '#1f77b4' title 'OTM-k (optimal)', \
         '' index '[exact]' using 1:(column(3+3*j)) with lines lw 2 lc rgb '#ff7f0e' title 'k-Seq', \
         '' index '[exact]' using 1:(column(4+3*j)) with lines lw 2 lc rgb '#2ca02c' title 'multi-round (recursive rejection sampling)', \
         '' index '[mc]' using 1:(column(2+6*j)):(column(3+6*j)):(column(4+6*j)) with yerrorbars pt 7 ps 0.7 lc rgb '#ff7f0e' title 'k-Seq, Monte-Carlo (spectr)', \
         '' index '[mc]' using 1:(column(5+6*j)):(column(6+6*j)):(column(7+6*j)) with yerrorbars pt 5 ps 0.7 lc rgb '#2ca02c' title 'multi-round, Monte-Carlo (rrs)'
}
unset multiplot
