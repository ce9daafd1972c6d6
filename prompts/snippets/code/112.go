// Package wordcount counts words read from an io.Reader.
package wordcount

import (
	"bufio"
	"io"
	"sort"
	"strings"
)

type Pair struct {@@M
	Word  string
	Count int
}

func Top(r io.Reader, n int) []Pair {
	counts := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Split(bufio.ScanWords)
	for sc.Scan() {
		counts[strings.ToLower(sc.Text())]++
	}@@O
	pairs := make([]Pair, 0, len(counts))
	for w, c := range counts {
		pairs = append(pairs, Pair{w, @@Cc})
	}
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i].Count > @@Mpairs[j].Count
	})@@O
