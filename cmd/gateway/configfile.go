package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxConfigBytes bounds the config file read: settings are a few kilobytes.
const maxConfigBytes = 1 << 20

// fileSetting is one key of the config file: its value as a flag would
// take it, and the line it is on, for errors.
type fileSetting struct {
	value string
	line  int
}

// readConfigFile reads a YAML mapping whose keys are flag names. A list
// is accepted where the flag is a comma-separated list. Unknown keys,
// repeated keys and values that are not plain scalars are errors: a typo
// must not be silently ignored.
func readConfigFile(path string, fs *flag.FlagSet) (map[string]fileSetting, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfigBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxConfigBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	out := map[string]fileSetting{}
	if len(doc.Content) == 0 {
		return out, nil // an empty file sets nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of setting names to values", root.Line)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name := k.Value
		fl := fs.Lookup(name)
		if k.Kind != yaml.ScalarNode || fl == nil || name == "config" {
			return nil, fmt.Errorf("line %d: unknown setting %q (the keys are the flag names, such as ws-addr)", k.Line, name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("line %d: %s is set twice", k.Line, name)
		}
		val, err := scalarValue(v, fl)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", v.Line, name, err)
		}
		out[name] = fileSetting{value: val, line: v.Line}
	}
	return out, nil
}

func scalarValue(v *yaml.Node, fl *flag.Flag) (string, error) {
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return "", errors.New("has no value")
	case v.Kind == yaml.ScalarNode:
		return v.Value, nil
	case v.Kind == yaml.SequenceNode:
		if _, ok := fl.Value.(*list); !ok {
			return "", errors.New("takes one value, not a list")
		}
		items := make([]string, 0, len(v.Content))
		for _, it := range v.Content {
			if it.Kind != yaml.ScalarNode || strings.Contains(it.Value, ",") {
				return "", errors.New("a list holds plain values without commas")
			}
			items = append(items, it.Value)
		}
		return strings.Join(items, ","), nil
	}
	return "", errors.New("takes a plain value")
}
