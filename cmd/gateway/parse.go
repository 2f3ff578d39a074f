package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// envPrefix starts every environment variable: -ws-addr is WEFTGATE_WS_ADDR.
const envPrefix = "WEFTGATE_"

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// source says where a setting's value came from, for error messages.
type source int

const (
	fromDefault source = iota
	fromFile
	fromEnv
	fromFlag
)

// parsed is the outcome of reading flags, the environment and the config
// file.
type parsed struct {
	s      settings
	fs     *flag.FlagSet
	source map[string]source
	file   map[string]fileSetting // what the config file set, by flag name
}

// settingError names the setting that holds a value that cannot work.
type settingError struct {
	Name   string // flag name
	Source source
	File   string // the config file and line, when Source is fromFile
	Value  string
	Err    error
}

func (e *settingError) Error() string {
	v := e.Value
	if secret[e.Name] {
		v = redacted
	}
	where := ""
	switch e.Source {
	case fromFile:
		where = " (from " + e.File + ")"
	case fromEnv:
		where = " (from " + envName(e.Name) + ")"
	case fromDefault:
		where = " (the default)"
	}
	return fmt.Sprintf("invalid -%s %q%s: %v", e.Name, v, where, e.Err)
}

func (e *settingError) Unwrap() error { return e.Err }

const redacted = "[redacted]"

// parseSettings reads args, then the environment for every flag args did not
// set, then the config file (-config) for every flag neither set (flag >
// environment > file > default). getenv returns "" for an unset variable;
// an empty variable counts as unset.
func parseSettings(args []string, getenv func(string) string, usage io.Writer) (*parsed, error) {
	p := &parsed{fs: flag.NewFlagSet("gateway", flag.ContinueOnError), source: map[string]source{}}
	bindFlags(p.fs, &p.s)
	// We print our own errors, and the usage only when asked: flag would
	// print it after every bad value too.
	p.fs.SetOutput(io.Discard)
	p.fs.Usage = func() {}
	if err := p.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(usage, p.fs)
		}
		return nil, err
	}
	if p.fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (settings are flags: -name value)", p.fs.Arg(0))
	}
	p.fs.Visit(func(f *flag.Flag) { p.source[f.Name] = fromFlag })
	var err error
	p.fs.VisitAll(func(f *flag.Flag) {
		if err != nil || p.source[f.Name] == fromFlag {
			return
		}
		v := getenv(envName(f.Name))
		if v == "" {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = &settingError{Name: f.Name, Source: fromEnv, Value: v, Err: e}
			return
		}
		p.source[f.Name] = fromEnv
	})
	if err != nil {
		return nil, err
	}
	if p.s.Config == "" {
		return p, nil
	}
	p.file, err = readConfigFile(p.s.Config, p.fs)
	if err != nil {
		return nil, p.invalid("config", err)
	}
	for name, fset := range p.file {
		if p.source[name] != fromDefault {
			continue
		}
		if e := p.fs.Lookup(name).Value.Set(fset.value); e != nil {
			return nil, &settingError{Name: name, Source: fromFile, File: fmt.Sprintf("%s line %d", p.s.Config, fset.line), Value: fset.value, Err: e}
		}
		p.source[name] = fromFile
	}
	return p, nil
}

// invalid is the error for a setting, carrying where its value came from.
func (p *parsed) invalid(name string, err error) error {
	e := &settingError{Name: name, Source: p.source[name], Value: p.fs.Lookup(name).Value.String(), Err: err}
	if e.Source == fromFile {
		e.File = fmt.Sprintf("%s line %d", p.s.Config, p.file[name].line)
	}
	return e
}

// printUsage lists every setting with its variable and default.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: gateway [serve|config|version|help] [flags]\n\n")
	fmt.Fprintf(w, "  serve    run the gateway (the default)\n")
	fmt.Fprintf(w, "  config   print the effective settings as JSON, secrets redacted\n")
	fmt.Fprintf(w, "  version  print the version\n\n")
	fmt.Fprintf(w, "Every flag -name has the environment variable %sNAME (dashes become\nunderscores) and the key name in the -config file (YAML); a flag wins over the\nvariable, the variable over the file, the file over the default.\n\n", envPrefix)
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		if kind != "" {
			kind = " " + kind
		}
		fmt.Fprintf(w, "  -%s%s\n    \t%s\n    \tenv %s", f.Name, kind, usage, envName(f.Name))
		if f.DefValue != "" {
			fmt.Fprintf(w, ", default %s", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// list is a comma-separated flag value.
type list []string

func (l *list) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set replaces the list (it does not append), so an environment variable
// or a repeated flag states the whole list.
func (l *list) Set(v string) error {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	*l = out
	return nil
}

func (l *list) Get() any {
	if *l == nil {
		return []string{}
	}
	return []string(*l)
}

// flagNames lists every flag, sorted; the README table test uses it.
func flagNames(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	sort.Strings(out)
	return out
}
