# lm.mk — `make lm`: the real ARPA language models of the examples
# (scripts/make-lm.sh: build/lm/fortunes-bigram.arpa, fortunes-quarter-bigram.arpa,
# en-us-phone.arpa).
.PHONY: lm
lm:
	sh scripts/make-lm.sh $(BUILD)/lm
# The README's "Your own model" example reads build/lm/fortunes-bigram.arpa:
# the suites that rerun it build the models first.
check: lm
test: lm
lm: deps
