#!/usr/bin/env python3
"""zipf_ranks.py -- the golden ranks of zipf/permutations_are_the_documented_feistel_network.

An independent transcription of the permutation sd_zipf.h documents (not of
its C code): splitmix64's finaliser (Steele, Lea & Flood 2014) as the mixer,
the context key mix(seed ^ mix(t * 2^32 ^ a)), a 4-round Feistel network on
2h bits (h = ceil(ceil(log2 V) / 2)) with round function
mix(key + r * 2^56 + half) & (2^h - 1), and cycle walking into 0..V-1.
Prints the mixer's first splitmix64 output for seed 0 (published:
0xe220a8397b1dcdaf), then the ranks the test pins."""
M = (1 << 64) - 1
def mix(z):  # splitmix64 (Steele, Lea & Flood 2014; Vigna's splitmix64.c)
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
print(hex(mix(0)))  # splitmix64 seeded 0: first output 0xe220a8397b1dcdaf
def rank(V, seed, t, a, b):
    bits = 0
    while (1 << bits) < V: bits += 1
    h = (bits + 1) // 2
    key = mix(seed ^ mix(((t << 32) ^ a) & M))
    mask = (1 << h) - 1
    y = b
    while True:
        L, R = y >> h, y & mask
        for r in range(4):
            f = mix((key + (r << 56) + R) & M) & mask
            L, R = R, L ^ f
        y = (L << h) | R
        if y < V: return y
V, seed = 10, 77
for (t, a) in [(1, 0), (3, 7)]:
    print(t, a, [rank(V, seed, t, a, b) for b in range(V)])
print([rank(1000, 77, 5, 999, b) for b in (0, 1, 500, 999)])
