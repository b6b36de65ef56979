# figures.mk — `make figures`: regenerate every figure under plots/out/
# (data NAME.dat, gnuplot script NAME.gp and NAME.png side by side; see
# plots/README.md).  Needs gnuplot and fonts-dejavu-core (`make deps`).
# About half a minute on 2 cores; `./simdec plot NAME` redoes one figure.
FIGURES_OUT ?= plots/out
FIGURES_BIN = $(if $(filter /%,$(BIN)),$(BIN),./$(BIN))

figures: $(BIN)
	$(FIGURES_BIN) plot all --out $(FIGURES_OUT)
