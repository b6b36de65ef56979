# block-fig3-ccdf.gp — Sun et al. 2025 (block verification), Fig. 3: the
# complementary CDF of the number τ of accepted draft tokens in one
# iteration, token vs block verification, γ = 10, on the toy model of eq. 2.
# Data: block-fig3-ccdf.dat, written by `simdec plot block-fig3-ccdf`.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'block-fig3-ccdf.png'
dat = 'block-fig3-ccdf.dat'

set title "Accepted draft length τ in one iteration, draft length γ = 10, toy model\n(draft p(A) = 2/3, target q(A) = 1/3, context-free): block verification accepts more"
set xlabel "l (draft tokens)"
set ylabel "P(τ ≥ l)"
set grid
set xrange [-0.2:10.2]
set xtics 1
set yrange [0:1.02]
set key top right box opaque
plot dat index '[mc]' using 1:3:4 with filledcurves fs transparent solid 0.3 noborder lc rgb '#1f77b4' notitle, \
     '' index '[mc]' using 1:6:7 with filledcurves fs transparent solid 0.3 noborder lc rgb '#d62728' notitle, \
     '' index '[exact]' using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'token verification, exact', \
     '' index '[exact]' using 1:3 with lines lw 2 lc rgb '#d62728' title 'block verification, exact', \
     '' index '[exact]' using 1:4 with lines lw 2 dt 2 lc rgb '#7f7f7f' title 'full-information optimum (bound)', \
     '' index '[mc]' using 1:2:3:4 with yerrorbars pt 6 ps 1.5 lc rgb '#1f77b4' title 'token, Monte-Carlo ± 95%', \
     '' index '[mc]' using 1:5:6:7 with yerrorbars pt 4 ps 1.5 lc rgb '#d62728' title 'block, Monte-Carlo ± 95%'
