package ir

var AggregateNames = map[string]bool{
	AggCount: true, AggSum: true, AggAvg: true, AggMin: true, AggMax: true,
	AggBoolAnd: true, AggBoolOr: true, AggEvery: true,
	AggStddev: true, AggStddevSamp: true, AggStddevPop: true,
	AggVariance: true, AggVarSamp: true, AggVarPop: true,
	AggStringAgg: true, AggFirstValue: true, AggLastValue: true,
	AggApproxCountDistinct: true, AggArrayAgg: true, AggJSONBAgg: true, AggJSONBObjectAgg: true,
}
