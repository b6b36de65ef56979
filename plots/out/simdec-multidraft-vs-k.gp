# simdec-multidraft-vs-k.gp — simdec's own figure: acceptance at one position
# with k drafts, optimal (OTM-k) vs k-Seq vs recursive rejection sampling,
# averaged over random (p, q) pairs.
# Data: simdec-multidraft-vs-k.dat.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'simdec-multidraft-vs-k.png'
dat = 'simdec-multidraft-vs-k.dat'

set title "k-draft acceptance at one position, mean over 40 random pairs (Dirichlet(1) draft and target on 8 tokens):\noptimal OTM-k > k-Seq > recursive rejection sampling at every k"
set xlabel "number of drafts k"
set ylabel "mean acceptance probability"
set grid
set xrange [0.5:10.5]
set xtics 1
set key bottom right box opaque
plot dat index '[mc]' using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb '#ff7f0e' notitle, \
     '' index '[mc]' using 1:6:7 with filledcurves fs transparent solid 0.2 noborder lc rgb '#2ca02c' notitle, \
     '' index '[exact]' using 1:2 with linespoints lw 2.5 pt 7 ps 0.8 lc rgb '#1f77b4' title 'optimal OTM-k (sorted-prefix formula)', \
     '' index '[exact]' using 1:6 with points pt 6 ps 2.2 lw 2 lc rgb 'black' title 'optimal, by the OTM linear program (GLPK)', \
     '' index '[exact]' using 1:3 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#ff7f0e' title 'k-Seq (SpecTr), exact', \
     '' index '[exact]' using 1:4 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#2ca02c' title 'recursive rejection sampling, exact', \
     '' index '[mc]' using 1:2:3:4 with yerrorbars pt 4 ps 1.5 lc rgb '#ff7f0e' title 'k-Seq, Monte-Carlo (spectr) ± 95%', \
     '' index '[mc]' using 1:5:6:7 with yerrorbars pt 4 ps 1.5 lc rgb '#2ca02c' title 'recursive rejection, Monte-Carlo (rrs) ± 95%'
