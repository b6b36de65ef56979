# simdec-referee.gp — each lossless verifier's exact expected accepted
# tokens per iteration as a fraction of the optimum of its class
# (valid-verify for one draft sequence, the k-draft optimum at one position,
# tree-valid for token trees where its LP reaches), on the referee's
# benchmark of models.
# Data: simdec-referee.dat, written by `simdec plot simdec-referee`.
set terminal pngcairo size 1600,760 font "DejaVu Sans,13" enhanced
set output 'simdec-referee.png'
dat = 'simdec-referee.dat'

set title "Fraction of the optimum of its class (exact; k = 2 drafts, γ = 2, each tree verifier's shape)"
set ylabel "exact accepted / optimum"
set grid ytics
set yrange [0:1.08]
set xrange [-0.7:21.7]
set xtics rotate by -35 nomirror
set key at graph 0.99, graph 0.22 right box opaque
plot dat index '[verifiers]' using 1:(NaN):xtic(2) notitle, \
     '' index '[default]' using ($1-0.24):3 with points pt 7 ps 1.6 lc rgb '#1f77b4' title 'default chain', \
     '' index '[spectr-bernoulli]' using ($1-0.08):3 with points pt 5 ps 1.6 lc rgb '#d62728' title 'SpecTr Bernoulli', \
     '' index '[chain-zeros]' using ($1+0.08):3 with points pt 9 ps 1.8 lc rgb '#2ca02c' title 'chain with zeros', \
     '' index '[fortunes-bigram]' using ($1+0.24):3 with points pt 11 ps 1.8 lc rgb '#9467bd' title 'fortunes bigram', \
     1 with lines dt 2 lc rgb '#000000' notitle
