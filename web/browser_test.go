package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The pages in headless Chromium (Debian's chromium), driven with chromedp.

// browserDeadline bounds one browser test.
const browserDeadline = 90 * time.Second

// browser starts headless Chromium and returns its first tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := mustHave(t, "chromium", "apt-get install -y chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-dev-shm-usage", true),
		// Two tabs edit at once: neither may be throttled for being hidden.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.WindowSize(1000, 760),
	)
	ctx, cancel := context.WithTimeout(context.Background(), browserDeadline)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	// Ending the allocator first ends the browser at once; closing its tabs
	// one by one first takes seconds when a page holds a stream open.
	t.Cleanup(func() { cancelAlloc(); cancelTab() })
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return tab
}

// newTab opens another tab in the browser of ctx.
func newTab(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	_ = cancel // the browser's cleanup ends every tab with it
	return tab
}

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval is the value of a JavaScript expression in the tab.
func eval[T any](t *testing.T, ctx context.Context, what, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitFor polls a JavaScript condition in the page until it is true.
func waitFor(t *testing.T, ctx context.Context, what, expr string, within time.Duration) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 600)`))
		t.Fatalf("waiting for %s: %v\npage: %s", what, err, state)
	}
}

// screenshot writes a PNG of the tab where the log says, for a person to look at.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("WEFTGATE_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "weftgate-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

const itemsJS = `[...document.querySelectorAll('#items li input[type=text]')].map((i) => i.value)`

// converged waits until the board in every tab lists want.
func converged(t *testing.T, want []string, tabs ...context.Context) {
	t.Helper()
	b, _ := json.Marshal(want)
	for _, tab := range tabs {
		waitFor(t, tab, fmt.Sprintf("the board to read %s", b), fmt.Sprintf(`JSON.stringify(%s) === %q`, itemsJS, b), 10*time.Second)
	}
}

func do(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	eval[chromedp.Void](t, ctx, what, "{"+js+"}; undefined")
}

func add(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	do(t, ctx, "add "+text, fmt.Sprintf(`document.getElementById('text').value = %q; document.getElementById('add').requestSubmit()`, text))
}

const connected = `document.getElementById('link').dataset.state === 'connected'`

func TestDemoTwoTabsEditOneBoard(t *testing.T) {
	data := t.TempDir()
	g := startGateway(t, "-store", "bolt", "-data-dir", data)
	a := browser(t)
	b := newTab(t, a)
	board := "http://" + g.addrs.WS + "/demo/?board=demo:two-tabs"
	run(t, a, "open the demo in tab a", chromedp.Navigate(board))
	run(t, b, "open the demo in tab b", chromedp.Navigate(board))
	waitFor(t, a, "tab a to connect", connected, 10*time.Second)
	waitFor(t, b, "tab b to connect", connected, 10*time.Second)

	add(t, a, "milk")
	converged(t, []string{"milk"}, a, b)
	add(t, b, "eggs")
	converged(t, []string{"milk", "eggs"}, a, b)
	add(t, a, "bread")
	converged(t, []string{"milk", "eggs", "bread"}, a, b)
	do(t, b, "edit", `const i = document.querySelectorAll('#items li input[type=text]')[0]; i.value = 'oat milk'; i.dispatchEvent(new Event('change'))`)
	converged(t, []string{"oat milk", "eggs", "bread"}, a, b)
	do(t, a, "move down", `document.querySelectorAll('#items li')[0].querySelector('button[title=down]').click()`)
	converged(t, []string{"eggs", "oat milk", "bread"}, a, b)
	do(t, b, "delete", `document.querySelectorAll('#items li')[2].querySelector('button[title=delete]').click()`)
	converged(t, []string{"eggs", "oat milk"}, a, b)
	// Both tabs at once: every add lands, in one order both agree on.
	for i := range 3 {
		add(t, a, fmt.Sprintf("a%d", i))
		add(t, b, fmt.Sprintf("b%d", i))
	}
	for _, tab := range []context.Context{a, b} {
		waitFor(t, tab, "eight items", `document.querySelectorAll('#items li').length === 8`, 10*time.Second)
	}
	both := eval[[]string](t, a, "read the board", itemsJS)
	converged(t, both, b)
	for _, item := range []string{"eggs", "oat milk", "a0", "a1", "a2", "b0", "b1", "b2"} {
		if !slices.Contains(both, item) {
			t.Errorf("the board %v lacks %q", both, item)
		}
	}
	for range 6 {
		do(t, b, "delete the last", `[...document.querySelectorAll('#items li')].at(-1).querySelector('button[title=delete]').click()`)
	}
	converged(t, []string{"eggs", "oat milk"}, a, b)
	// Text being typed in one tab survives the other tab's edits.
	do(t, a, "type without saving", `const i = document.querySelectorAll('#items li input[type=text]')[0]; i.focus(); i.value = 'eggs, six'`)
	add(t, b, "jam")
	converged(t, []string{"eggs, six", "oat milk", "jam"}, a)
	do(t, a, "save", `document.activeElement.dispatchEvent(new Event('change'))`)
	converged(t, []string{"eggs, six", "oat milk", "jam"}, a, b)
	do(t, b, "delete jam", `[...document.querySelectorAll('#items li')].at(-1).querySelector('button[title=delete]').click()`)
	converged(t, []string{"eggs, six", "oat milk"}, a, b)
	do(t, a, "tick", `document.querySelectorAll('#items li input[type=checkbox]')[1].click()`)
	waitFor(t, b, "the tick in tab b", `document.querySelectorAll('#items li')[1]?.classList.contains('done')`, 10*time.Second)

	// The gateway restarts on the same address and store: both tabs show
	// the link going, reconnect, resync, and edit on.
	ws := g.addrs.WS
	g.stop()
	for _, tab := range []context.Context{a, b} {
		waitFor(t, tab, "the tab to see the link end", `document.getElementById('link').dataset.state === 'offline'`, 10*time.Second)
	}
	startGateway(t, "-store", "bolt", "-data-dir", data, "-ws-addr", ws) // stopped at cleanup
	waitFor(t, a, "tab a to reconnect", connected, 20*time.Second)
	waitFor(t, b, "tab b to reconnect", connected, 20*time.Second)
	add(t, b, "after the restart")
	converged(t, []string{"eggs, six", "oat milk", "after the restart"}, a, b)
	screenshot(t, a, "demo")
}

func TestInspectorShowsADocumentAndItsCommits(t *testing.T) {
	g := startGateway(t)
	demo := browser(t)
	run(t, demo, "open the demo", chromedp.Navigate("http://"+g.addrs.WS+"/demo/?board=demo:inspected"))
	waitFor(t, demo, "the demo to connect", connected, 10*time.Second)
	add(t, demo, "first")
	converged(t, []string{"first"}, demo)

	ins := newTab(t, demo)
	run(t, ins, "open the inspector", chromedp.Navigate("http://"+g.addrs.WS+"/inspect/"))
	waitFor(t, ins, "the document in the list", `[...document.querySelectorAll('#documents tr.doc')].some((r) => r.dataset.name === 'demo:inspected')`, 10*time.Second)
	waitFor(t, ins, "the key figures", `document.getElementById('connections').textContent === '1' && document.getElementById('store').textContent === 'memory healthy'`, 10*time.Second)
	do(t, ins, "search", `const s = document.getElementById('search'); s.value = 'nothing-like-it'; s.dispatchEvent(new Event('input'))`)
	waitFor(t, ins, "search to hide it", `document.querySelectorAll('#documents tr.doc').length === 0`, 5*time.Second)
	do(t, ins, "search", `const s = document.getElementById('search'); s.value = 'inspected'; s.dispatchEvent(new Event('input'))`)
	waitFor(t, ins, "search to find it", `document.querySelectorAll('#documents tr.doc').length === 1`, 5*time.Second)
	do(t, ins, "open the document", `document.querySelector('#documents tr.doc').click()`)
	waitFor(t, ins, "its tree", `document.getElementById('doc-state').dataset.state === 'live' && JSON.parse(document.getElementById('tree').textContent).items[0].text === 'first'`, 10*time.Second)

	waitFor(t, ins, "who answers for it", `document.getElementById('doc-claims').textContent === 'no backend (the open fallback)'`, 5*time.Second)
	// Its links: the demo's and the inspector's own peer.
	waitFor(t, ins, "its links", `[...document.querySelectorAll('#doc-links tbody tr')].map((r) => r.textContent).join() === 'c11127.0.0.1anonymous,c21127.0.0.1anonymous'`, 5*time.Second)

	// A commit shows within a second of its making, timed on one clock (the browser's).
	do(t, ins, "time arrivals", `new MutationObserver(() => { window.arrived ??= Date.now(); }).observe(document.getElementById('stream'), { childList: true })`)
	do(t, demo, "commit", `window.made = Date.now(); document.getElementById('text').value = 'second'; document.getElementById('add').requestSubmit()`)
	waitFor(t, ins, "the commit in the stream", `document.querySelector('#stream li')?.textContent.includes('"second"')`, 5*time.Second)
	made := eval[float64](t, demo, "read the time made", `window.made`)
	arrived := eval[float64](t, ins, "read the time arrived", `window.arrived`)
	if d := time.Duration(arrived-made) * time.Millisecond; d > time.Second || d < 0 {
		t.Errorf("the commit reached the inspector %v after it was made, want within a second", d)
	}
	waitFor(t, ins, "the tree to follow", `JSON.parse(document.getElementById('tree').textContent).items[1]?.text === 'second'`, 5*time.Second)
	line := eval[string](t, ins, "read the stream", `document.querySelector('#stream li').textContent`)
	// The cursor (the list's add, the first item, the second), its origin, each delta's path.
	if !strings.HasPrefix(line, "#3 from c1: ") || !strings.Contains(line, `add /items/`) || !strings.Contains(line, `/text = "second"`) {
		t.Errorf("the stream line %q does not give the cursor, the origin and each delta's path", line)
	}
	screenshot(t, ins, "inspect")
}

func TestDemoShowsARefusalAndItsReason(t *testing.T) {
	data := t.TempDir()
	g := startGateway(t, "-store", "bolt", "-data-dir", data)
	tab := browser(t)
	board := "/demo/?board=demo:read-only"
	run(t, tab, "open the demo", chromedp.Navigate("http://"+g.addrs.WS+board))
	waitFor(t, tab, "the demo to connect", connected, 10*time.Second)
	add(t, tab, "kept")
	converged(t, []string{"kept"}, tab)
	g.stop()
	// The same board on a gateway that refuses every write.
	g = startGateway(t, "-store", "bolt", "-data-dir", data, "-read-only")
	run(t, tab, "reload the demo", chromedp.Navigate("http://"+g.addrs.WS+board))
	waitFor(t, tab, "the demo to connect", connected, 10*time.Second)
	converged(t, []string{"kept"}, tab)
	add(t, tab, "refused")
	waitFor(t, tab, "the refusal and its reason", `document.getElementById('link').dataset.state === 'refused' && document.getElementById('refusal').textContent === '(read-only)'`, 10*time.Second)
	converged(t, []string{"kept"}, tab) // it yielded to the gateway's state
	screenshot(t, tab, "demo-refused")
}

func TestForeignOriginRefused(t *testing.T) {
	g := startGateway(t)
	// A page on another origin (another port) that opens the gateway's socket.
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><script>
const ws = new WebSocket('ws://%s/ws');
ws.onopen = () => { window.outcome = 'open'; };
ws.onclose = (e) => { window.outcome ??= 'closed ' + e.code; };
</script>`, g.addrs.WS)
	}))
	defer foreign.Close()
	tab := browser(t)
	run(t, tab, "open the foreign page", chromedp.Navigate(foreign.URL))
	waitFor(t, tab, "the socket's outcome", `window.outcome !== undefined`, 10*time.Second)
	outcome := eval[string](t, tab, "read the outcome", `window.outcome`)
	if outcome != "closed 1006" {
		t.Errorf("a page from a foreign origin: %q, want the handshake refused (closed 1006)", outcome)
	}
	resp, err := http.Get("http://" + g.addrs.WS + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Counters struct {
			Handshakes map[string]int `json:"handshake_refusals_by_reason"`
		} `json:"counters"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"origin": 1}; !reflect.DeepEqual(nonZero(st.Counters.Handshakes), want) {
		t.Errorf("handshake refusals %v, want %v", st.Counters.Handshakes, want)
	}
}

func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
