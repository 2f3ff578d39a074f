package buildtest

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

type built struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

var (
	mu    sync.Mutex
	cache = map[string]*built{}
	dir   string
)

// Binary returns the path of pkg (an import path, such as
// "github.com/weftgate/weftgate/cmd/gateway") built with CGO_ENABLED=0,
// building it the first time it is asked for. A failed build fails t with
// the compiler's output.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	mu.Lock()
	b := cache[pkg]
	if b == nil {
		b = &built{}
		cache[pkg] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		d, err := tempDir()
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(d, path.Base(pkg)+"-"+filepath.Base(os.Args[0]))
		cmd := exec.Command("go", "build", "-o", b.bin, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, b.err, b.out)
	}
	return b.bin
}

// Cleanup removes what Binary built; a TestMain calls it after m.Run.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
}

func tempDir() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if dir == "" {
		d, err := os.MkdirTemp("", "weftgate-build-")
		if err != nil {
			return "", err
		}
		dir = d
	}
	return dir, nil
}
