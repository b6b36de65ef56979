# simdec-trees.gp — token trees: expected accepted path length of one
# iteration against the tree's size, for the tree verifiers (exact lines,
# Monte-Carlo points), the best valid verifier of the same tree (lp
# tree-valid) and full information (lp tree-ot), deep / wide / mixed shapes,
# on the 7-token chain (top) and SpecTr's Bernoulli pair (bottom).
# Data: simdec-trees.dat.
set terminal pngcairo size 1800,1100 font "DejaVu Sans,12" enhanced
set output 'simdec-trees.png'
dat = 'simdec-trees.dat'

set multiplot layout 2,3 title "Expected accepted path length vs tree size (nodes): tree verifiers, the best valid tree verifier (LP tree-valid) and full information (LP tree-ot)"
set grid
set xrange [0.5:6.5]
set xtics 1
set xlabel "nodes"
set ylabel "E[accepted path length]"
set key bottom right box opaque font ",10"

do for [m in "chain ber"] {
  do for [fam in "deep wide mixed"] {
    b = '['.m.'-'.fam.']'
    if (m eq "chain" && fam eq "deep") { set key } else { unset key }
    set title (m eq "chain" ? "7-token chain (Yin et al.), " : "Bernoulli p=Ber(0.25), q=Ber(0.6), ").fam." trees"
    plot dat index b using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'tree-rrs (iid)', \
         '' index b using 1:3 with lines lw 2 lc rgb '#2ca02c' title 'tree-rrs-wor', \
         '' index b using 1:4 with lines lw 2 lc rgb '#9467bd' title 'tree-topk', \
         '' index b using 1:5 with lines lw 2.5 lc rgb '#d62728' title 'traversal (wor)', \
         '' index b using 1:6 with lines lw 2.5 lc rgb '#ff7f0e' title 'univer (iid; spectr-gbv on k,1,...,1)', \
         '' index b using 1:7 with linespoints lw 1.5 dt 2 pt 6 lc rgb 'black' title 'tree-valid, iid drafts', \
         '' index b using 1:9 with linespoints lw 1.5 dt 2 pt 4 lc rgb '#7f7f7f' title 'tree-valid, wor drafts', \
         '' index b using 1:8 with linespoints lw 1 dt 3 pt 1 lc rgb 'black' title 'tree-ot, iid', \
         '' index b using 1:10 with linespoints lw 1 dt 3 pt 2 lc rgb '#7f7f7f' title 'tree-ot, wor', \
         '' index b using 1:11:12:13 with yerrorbars pt 7 ps 0.5 lc rgb '#1f77b4' notitle, \
         '' index b using 1:14:15:16 with yerrorbars pt 7 ps 0.5 lc rgb '#2ca02c' notitle, \
         '' index b using 1:17:18:19 with yerrorbars pt 7 ps 0.5 lc rgb '#9467bd' notitle, \
         '' index b using 1:20:21:22 with yerrorbars pt 7 ps 0.5 lc rgb '#d62728' notitle, \
         '' index b using 1:23:24:25 with yerrorbars pt 7 ps 0.5 lc rgb '#ff7f0e' title 'Monte-Carlo ± 95%'
  }
}
unset multiplot
