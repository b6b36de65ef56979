# lm.mk — `make lm`: the real ARPA language models of the examples
# (scripts/make-lm.sh: build/lm/fortunes-bigram.arpa, build/lm/en-us-phone.arpa).
.PHONY: lm
lm:
	sh scripts/make-lm.sh $(BUILD)/lm
