package main

import (
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"time"
)

// effective is every setting as it will be used, keyed by flag name,
// secrets redacted: what `gateway config` prints and start-up logs.
func (p *parsed) effective() map[string]any {
	out := map[string]any{}
	p.fs.VisitAll(func(f *flag.Flag) { out[f.Name] = p.value(f) })
	return out
}

func (p *parsed) value(f *flag.Flag) any {
	if secret[f.Name] {
		if f.Value.String() == "" {
			return ""
		}
		return redacted
	}
	v := f.Value.(flag.Getter).Get()
	if d, ok := v.(time.Duration); ok {
		return d.String()
	}
	return v
}

func (p *parsed) printEffective(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p.effective())
}

// logAttrs is the effective settings as log attributes, sorted by name.
func (p *parsed) logAttrs() []any {
	var out []any
	p.fs.VisitAll(func(f *flag.Flag) { out = append(out, slog.Any(f.Name, p.value(f))) })
	return out
}
