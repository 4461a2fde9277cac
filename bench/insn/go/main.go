// Instruction-count harness for Go's own implementations, the peer bench/insn/run.py
// counts beside archcrypt: golang.org/x/crypto chacha20, poly1305 and chacha20poly1305,
// the standard library's crypto/sha256 and crypto/sha512. Same command line and the same
// per-message use as bench/insn/harness.c (poly1305-stream: one MAC, CALLS writes of SIZE
// bytes, as BenchmarkWrite64/Write1K do):
//
//	harness OPERATION SIZE CALLS    (exit 2: Go has no such operation, e.g. Camellia)
//
// Built in GOPATH mode against Debian's golang-golang-x-crypto-dev source
// (GO111MODULE=off GOPATH=/usr/share/gocode GOARCH=ppc64le).
package main

import (
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/poly1305"
)

var sink byte

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: harness OPERATION SIZE CALLS")
		os.Exit(1)
	}
	op := os.Args[1]
	size, err1 := strconv.Atoi(os.Args[2])
	calls, err2 := strconv.Atoi(os.Args[3])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "harness: bad size or calls")
		os.Exit(1)
	}
	in := make([]byte, size)
	out := make([]byte, size+16)
	for i := range in {
		in[i] = byte(i*131 + 7)
	}
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i + 1)
	}
	nonce := make([]byte, 12)

	var once func()
	finish := func() {}
	switch op {
	case "chacha20":
		once = func() {
			c, err := chacha20.NewUnauthenticatedCipher(key, nonce)
			if err != nil {
				panic(err)
			}
			c.SetCounter(1)
			c.XORKeyStream(out[:size], in)
		}
	case "poly1305":
		var k [32]byte
		copy(k[:], key)
		var tag [16]byte
		once = func() { poly1305.Sum(&tag, in, &k); out[0] = tag[0] }
	case "poly1305-stream":
		var k [32]byte
		copy(k[:], key)
		mac := poly1305.New(&k)
		finish = func() { out[0] = mac.Sum(nil)[0] }
		once = func() { mac.Write(in) }
	case "chacha20-poly1305":
		once = func() {
			aead, err := chacha20poly1305.New(key)
			if err != nil {
				panic(err)
			}
			aead.Seal(out[:0], nonce, in, nil)
		}
	case "sha256":
		once = func() { d := sha256.Sum256(in); out[0] = d[0] }
	case "sha512":
		once = func() { d := sha512.Sum512(in); out[0] = d[0] }
	default:
		os.Exit(2)
	}
	once() // warm-up, as in harness.c
	for c := 0; c < calls; c++ {
		nonce[0] = byte(c)
		once()
	}
	finish()
	sink = out[0]
}
