package difftest

import (
	"flag"
)

// parallelismFlag is the number of actors views run on (the server's
// streaming_parallelism default): results must not depend on it.
var parallelismFlag = flag.Int("difftest.parallelism", 0,
	"difftest: views run on N actors (0: 1 or 4 by the seed, see seedParallelism)")

// seedParallelism returns the parallelism of a seed's server:
// -difftest.parallelism if given, else 1 or 4 by bit b of the seed, so that
// consecutive seeds, as CI runs, cover both. TestDifferential uses bit 1
// (its barrier interval follows bit 0; any three consecutive seeds cover
// both parallelisms), TestEventTime, which runs two seeds, bit 0.
func seedParallelism(seed int64, b uint) int {
	if *parallelismFlag > 0 {
		return *parallelismFlag
	}
	return [...]int{1, 4}[uint64(seed)>>b&1]
}
