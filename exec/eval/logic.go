package eval

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// andOrNode is three-valued AND (OR when isOr) over two or more arguments,
// evaluated a byte of rows at a time. Arguments are evaluated left to right;
// rows already decided (false for AND, true for OR) are inactive for the
// later arguments, so their row errors do not count.
type andOrNode struct {
	args []node
	isOr bool
}

func (n *andOrNode) typ() types.T { return types.BoolT }

func (n *andOrNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	nb := (c.n + 7) >> 3
	// decided: known false (AND) / known true (OR) in some argument.
	// all: known true (AND) / known false (OR) in every argument so far.
	decided := make([]byte, nb)
	all := make([]byte, nb)
	mask := make([]byte, nb)
	for i := range all {
		all[i] = 0xff
	}
	clearPadding(all, c.n)
	saved := c.active
	defer func() { c.active = saved }()
	for k, arg := range n.args {
		if k > 0 {
			// Rows already decided need not be evaluated again.
			for i := range mask {
				m := ^decided[i]
				if saved != nil {
					m &= saved[i]
				}
				mask[i] = m
			}
			clearPadding(mask, c.n)
			if !anyBit(mask) {
				break
			}
			c.active = mask
		}
		var vbits, valid []byte
		if kc, ok := asConst(arg); ok {
			vbits, valid = make([]byte, nb), make([]byte, nb)
			if !kc.d.Null {
				for i := range valid {
					valid[i] = 0xff
					if kc.d.Bool() {
						vbits[i] = 0xff
					}
				}
			}
		} else {
			arr, err := arg.eval(c, rec)
			if err != nil {
				return nil, err
			}
			vbits, valid = boolBitsCopy(arr, c.n), validBitsCopy(arr, c.n)
			arr.Release()
		}
		for i := 0; i < nb; i++ {
			v := vbits[i]
			if n.isOr {
				v = ^v
			}
			// v is now "the non-deciding value" (true for AND).
			decided[i] |= valid[i] &^ v
			all[i] &= valid[i] & v
		}
	}
	c.active = saved
	vals := allocBits(c.mem, c.n, false)
	valid := allocBits(c.mem, c.n, false)
	vb, db := vals.Bytes(), valid.Bytes()
	for i := 0; i < nb; i++ {
		db[i] = decided[i] | all[i]
		if n.isOr {
			vb[i] = decided[i]
		} else {
			vb[i] = all[i] &^ decided[i]
		}
	}
	clearPadding(vb, c.n)
	clearPadding(db, c.n)
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, valid, vals), nil
}

// unaryBoolNode is NOT, IS [NOT] NULL, IS TRUE and IS FALSE: pure bitmap
// operations.
type unaryBoolNode struct {
	fn  string
	arg node
}

func (n *unaryBoolNode) typ() types.T { return types.BoolT }

func (n *unaryBoolNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	arr, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	valid := validBitsCopy(arr, c.n)
	var vbits []byte
	if n.fn == ir.FnNot || n.fn == ir.FnIsTrue || n.fn == ir.FnIsFalse {
		vbits = boolBitsCopy(arr, c.n)
	}
	vals := allocBits(c.mem, c.n, false)
	out := vals.Bytes()
	for i := range out {
		switch n.fn {
		case ir.FnNot:
			out[i] = ^vbits[i]
		case ir.FnIsNull:
			out[i] = ^valid[i]
		case ir.FnIsNotNull:
			out[i] = valid[i]
		case ir.FnIsTrue:
			out[i] = valid[i] & vbits[i]
		case ir.FnIsFalse:
			out[i] = valid[i] &^ vbits[i]
		}
	}
	clearPadding(out, c.n)
	if n.fn == ir.FnNot {
		vb := allocBits(c.mem, c.n, false)
		copy(vb.Bytes(), valid)
		return makeArray(arrow.FixedWidthTypes.Boolean, c.n, vb, vals), nil
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, nil, vals), nil
}
