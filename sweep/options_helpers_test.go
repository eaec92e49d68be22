package sweep

// mixedConfig applies options of Mark, of Sweep or of both to one config,
// for the tests of the options themselves.
func mixedConfig(opts []any) *config {
	c := defaultConfig()
	for _, o := range opts {
		switch o := o.(type) {
		case MarkOption:
			o.applyMark(c)
		case SweepOption:
			o.applySweep(c)
		default:
			panic("not an option")
		}
	}
	return c.finish()
}

// sweepOpts keeps the options of opts that Sweep takes too, for tests that
// give Sweep the options of the Mark of its run.
func sweepOpts(opts []MarkOption) []SweepOption {
	var out []SweepOption
	for _, o := range opts {
		if s, ok := o.(SweepOption); ok {
			out = append(out, s)
		}
	}
	return out
}
