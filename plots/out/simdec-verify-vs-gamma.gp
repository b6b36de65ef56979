# simdec-verify-vs-gamma.gp — simdec's own figure: expected accepted draft
# tokens in one iteration against the draft length γ for token and block
# verification, the best valid verifier (the LP of Sun et al. 2025, Def. 1 / Lemma 2)
# and the full-information bound.
# Data: simdec-verify-vs-gamma.dat.
set terminal pngcairo size 1200,720 font "DejaVu Sans,13" enhanced
set output 'simdec-verify-vs-gamma.png'
dat = 'simdec-verify-vs-gamma.dat'

set title "Accepted draft tokens per iteration vs draft length γ (3-token random nonstationary chain, first position):\nblock verification attains the best valid verifier (LP optimum), token verification falls behind"
set xlabel "draft length γ"
set ylabel "expected accepted draft tokens E[τ]"
set grid
set xrange [0.5:7.5]
set xtics 1
set key top left box opaque
plot dat index '[mc]' using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lc rgb '#1f77b4' notitle, \
     '' index '[mc]' using 1:6:7 with filledcurves fs transparent solid 0.2 noborder lc rgb '#d62728' notitle, \
     '' index '[exact]' using 1:4 with linespoints lw 2 dt 2 pt 1 lc rgb '#7f7f7f' title 'full-information bound (block-level OT)', \
     '' index '[exact]' using 1:5 with points pt 6 ps 2.5 lw 2 lc rgb 'black' title 'best valid verifier, LP optimum (GLPK)', \
     '' index '[exact]' using 1:3 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#d62728' title 'block verification, exact', \
     '' index '[exact]' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#1f77b4' title 'token verification, exact', \
     '' index '[mc]' using 1:5:6:7 with yerrorbars pt 4 ps 1.4 lc rgb '#d62728' title 'block, Monte-Carlo ± 95%', \
     '' index '[mc]' using 1:2:3:4 with yerrorbars pt 4 ps 1.4 lc rgb '#1f77b4' title 'token, Monte-Carlo ± 95%'
