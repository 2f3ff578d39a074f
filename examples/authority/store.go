package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/protocol/commit"
)

// MaxFileBytes bounds one document file read back; a bigger one is refused
// rather than read into memory.
const MaxFileBytes = 64 << 20

// dirStore keeps one JSON file per document in a directory.
type dirStore struct{ dir string }

// stateFile is a document file: {"document", "root": {"id", "kind"},
// "cursor", "state"} with the state in the commit JSON view (null when the
// document is empty).
type stateFile struct {
	Document string         `json:"document"`
	Root     rootJSON       `json:"root"`
	Cursor   uint64         `json:"cursor"`
	State    *commit.Commit `json:"state"`
}

type rootJSON struct {
	ID   commit.ID   `json:"id"`
	Kind commit.Kind `json:"kind"`
}

// fileName escapes a document name into one safe file name: letters,
// digits, '-' and '_' stay, every other byte is %XX, so no name can climb
// out of the directory or collide with another.
func fileName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String() + ".json"
}

func (s dirStore) path(name string) string { return filepath.Join(s.dir, fileName(name)) }

// Load reads a document; nil when there is no file for it.
func (s dirStore) Load(name string) (*client.Loaded, error) {
	f, err := os.Open(s.path(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte bound", f.Name(), fi.Size(), MaxFileBytes)
	}
	var sf stateFile
	if err := json.NewDecoder(f).Decode(&sf); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if sf.Document != name {
		return nil, fmt.Errorf("%s holds %q, not %q", f.Name(), sf.Document, name)
	}
	l := &client.Loaded{State: client.State{Root: client.Root{ID: sf.Root.ID, Kind: sf.Root.Kind}}, Cursor: sf.Cursor}
	if sf.State != nil {
		l.State.Commit = *sf.State
	}
	return l, nil
}

// Save writes a document atomically: a reader sees the old file or the new.
func (s dirStore) Save(name string, st client.State, cursor uint64) error {
	sf := stateFile{Document: name, Root: rootJSON{ID: st.Root.ID, Kind: st.Root.Kind}, Cursor: cursor}
	if len(st.Commit.Deltas) > 0 {
		sf.State = &st.Commit
	}
	b, err := json.MarshalIndent(sf, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), s.path(name)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Cursors lists every stored document's cursor, for resuming.
func (s dirStore) Cursors() (map[string]uint64, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name, err := unescape(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil {
			continue // not one of ours
		}
		l, err := s.Load(name)
		if err != nil {
			return nil, err
		}
		if l != nil {
			out[name] = l.Cursor
		}
	}
	return out, nil
}

// unescape reverses fileName; a name it would not have written is an error.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 > len(s) {
			return "", errors.New("a truncated escape")
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", err
		}
		b.WriteByte(byte(v))
		i += 2
	}
	if fileName(b.String()) != s+".json" {
		return "", errors.New("not an escaped name")
	}
	return b.String(), nil
}
