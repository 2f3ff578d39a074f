package link

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// script runs transcript commands against one link. Roots are written as a
// label of up to 12 characters, with /array or /map for those kinds, and -
// for none; commits, undos and states as text (nil for none, or c*N for N
// bytes of c); reasons as code[=message][@path/steps].
type script struct{ l *Link }

func newScript() *script { return &script{l: New(Config{})} }

func (s *script) run(t *testing.T, file string, line int, cmd string) []string {
	f := strings.Fields(cmd)
	bad := func() []string {
		t.Fatalf("%s:%d: cannot read %q", file, line, cmd)
		return nil
	}
	num := func(i int) uint64 {
		if i >= len(f) {
			bad()
		}
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			bad()
		}
		return n
	}
	arg := func(i int) string {
		if i >= len(f) {
			bad()
		}
		return f[i]
	}
	rest := func(i int) string { // the rest of the line, with Go escapes
		if i >= len(f) {
			return ""
		}
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.Join(f[i:], " "), `"`, `\"`) + `"`)
		if err != nil {
			bad()
		}
		return s
	}
	has := func(i int, word string) bool { return len(f) > i && f[i] == word }
	switch f[0] {
	case "new":
		var c Config
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if err != nil {
				bad()
			}
			switch k {
			case "window":
				c.Window = n
			case "topics":
				c.MaxTopics = n
			case "queued":
				c.MaxQueued = n
			case "framebytes":
				c.MaxFrameBytes = n
			case "forget":
				c.ForgetSent = n != 0
			default:
				bad()
			}
		}
		s.l = New(c)
		return nil
	case "share":
		n, err := s.l.Share(arg(1), parseRoot(arg(2)), has(3, "want"))
		return result(n, err)
	case "send":
		var undo []byte
		if len(f) > 3 {
			undo = parseBytes(f[3])
		}
		n, err := s.l.Send(num(1), parseBytes(arg(2)), undo)
		return result(n, err)
	case "decline":
		return result(0, s.l.Decline(arg(1)))
	case "declinewith":
		return result(0, s.l.DeclineWith(arg(1), protocol.Reason(arg(2)), rest(3)))
	case "fault":
		return result(0, s.l.Fault(num(1), protocol.Reason(arg(2)), rest(3)))
	case "state":
		return result(0, s.l.SendState(num(1), parseBytes(arg(2))))
	case "refuse":
		return result(0, s.l.Refuse(num(1), num(2), parseReasons(f[3:])))
	case "resync":
		return result(0, s.l.Resync(num(1)))
	case "leave":
		return result(0, s.l.Leave(num(1)))
	case "faultlink":
		s.l.FaultLink(protocol.Reason(arg(1)), rest(2))
	case "badframe":
		s.l.BadFrame(num(1), rest(2))
	case "close":
		s.l.Close()
	case "recv":
		fr := frame.Frame{Topic: num(2)}
		switch arg(1) {
		case "open":
			fr.Kind, fr.Name, fr.Root, fr.Want = frame.Open, arg(3), parseRoot(arg(4)), has(5, "want")
		case "state":
			fr.Kind, fr.State = frame.State, parseBytes(arg(3))
		case "commits":
			fr.Kind, fr.First = frame.Commits, num(3)
			for _, c := range f[4:] {
				fr.Commits = append(fr.Commits, parseBytes(c))
			}
		case "refused":
			fr.Kind, fr.Seq, fr.Reasons = frame.Refused, num(3), parseReasons(f[4:])
		case "leave":
			fr.Kind = frame.Leave
		case "fault":
			fr.Kind, fr.Reason, fr.Message = frame.Fault, arg(3), rest(4)
		default:
			return bad()
		}
		s.l.Receive(fr)
	default:
		return bad()
	}
	return nil
}

// result shows what a call returned: a number, an error, or nothing.
func result(n uint64, err error) []string {
	switch {
	case err != nil:
		return []string{"error: " + err.Error()}
	case n != 0:
		return []string{fmt.Sprintf("= %d", n)}
	}
	return nil
}

// drain shows the frames the link sends (>) and then its events.
func (s *script) drain() []string {
	var out []string
	for _, f := range s.l.Flush() {
		out = append(out, "> "+showFrame(f))
		if err := roundTrip(f); err != nil {
			out = append(out, "! "+err.Error())
		}
	}
	for _, e := range s.l.Events() {
		out = append(out, showEvent(e))
	}
	return out
}

// roundTrip checks that f is a frame the codec writes and reads back as f.
func roundTrip(f frame.Frame) error {
	b, err := frame.Encode(f)
	if err != nil {
		return err
	}
	g, err := frame.Decode(b)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(f, g) {
		return fmt.Errorf("re-decodes as %+v", g)
	}
	return nil
}

func showFrame(f frame.Frame) string {
	switch f.Kind {
	case frame.Open:
		return fmt.Sprintf("open %d %s %s%s", f.Topic, f.Name, showRoot(f.Root), opt(f.Want, " want"))
	case frame.State:
		return fmt.Sprintf("state %d %s", f.Topic, showBytes(f.State))
	case frame.Commits:
		cs := make([]string, len(f.Commits))
		for i, c := range f.Commits {
			cs[i] = showBytes(c)
		}
		return fmt.Sprintf("commits %d %d %s", f.Topic, f.First, strings.Join(cs, " "))
	case frame.Refused:
		return fmt.Sprintf("refused %d %d %s", f.Topic, f.Seq, showReasons(f.Reasons))
	case frame.Leave:
		return fmt.Sprintf("leave %d", f.Topic)
	case frame.Fault:
		return fmt.Sprintf("fault %d %s%s", f.Topic, f.Reason, said(f.Message))
	}
	return fmt.Sprintf("kind(%d) %d", f.Kind, f.Topic)
}

func showEvent(e Event) string {
	switch e := e.(type) {
	case PeerOpened:
		return fmt.Sprintf("PeerOpened %s peer=%d root=%s%s", e.Name, e.PeerTopic, showRoot(e.Root), opt(e.Want, " want"))
	case Live:
		return fmt.Sprintf("Live %d %s", e.Topic, e.Name)
	case StateWanted:
		return fmt.Sprintf("StateWanted %d", e.Topic)
	case CommitsArrived:
		return fmt.Sprintf("CommitsArrived %d seq=%d %s", e.Topic, e.Seq, showBytes(e.Commit))
	case StateArrived:
		return fmt.Sprintf("StateArrived %d %s", e.Topic, showBytes(e.State))
	case PeerRefused:
		return fmt.Sprintf("PeerRefused %d seq=%d commit=%s undo=%s %s", e.Topic, e.Seq,
			showBytes(e.Commit), showBytes(e.Undo), showReasons(e.Reasons))
	case Ended:
		return fmt.Sprintf("Ended %d %s %s%s%s", e.Topic, e.Name, e.Reason, opt(e.ByPeer, " by-peer"), said(e.Message))
	case LinkEnded:
		return fmt.Sprintf("LinkEnded %s%s%s", e.Reason, opt(e.ByPeer, " by-peer"), said(e.Message))
	}
	return fmt.Sprintf("unknown event %#v", e)
}

func opt(b bool, s string) string {
	if b {
		return s
	}
	return ""
}

// said shows a message last on its line, so it needs no quoting.
func said(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

func parseRoot(s string) *frame.Root {
	if s == "-" {
		return nil
	}
	label, kind, _ := strings.Cut(s, "/")
	r := &frame.Root{Kind: map[string]commit.Kind{"": commit.Object, "array": commit.Array, "map": commit.Map}[kind]}
	copy(r.ID[:], label)
	return r
}

func showRoot(r *frame.Root) string {
	if r == nil {
		return "-"
	}
	s := strings.TrimRight(string(r.ID[:]), "\x00")
	if r.Kind != commit.Object {
		s += "/" + r.Kind.String()
	}
	return s
}

func parseBytes(s string) []byte {
	if s == "nil" {
		return nil
	}
	if c, n, ok := strings.Cut(s, "*"); ok {
		if k, err := strconv.Atoi(n); err == nil {
			return []byte(strings.Repeat(c, k))
		}
	}
	return []byte(s)
}

func showBytes(b []byte) string {
	switch {
	case b == nil:
		return "nil"
	case len(b) > 8 && strings.Count(string(b), string(b[:1])) == len(b):
		return fmt.Sprintf("%c*%d", b[0], len(b))
	}
	return string(b)
}

func parseReasons(fs []string) []frame.Reason {
	var rs []frame.Reason
	for _, f := range fs {
		var r frame.Reason
		f, path, hasPath := strings.Cut(f, "@")
		r.Code, r.Message, _ = strings.Cut(f, "=")
		if hasPath {
			r.Path = strings.Split(path, "/")
		}
		rs = append(rs, r)
	}
	return rs
}

func showReasons(rs []frame.Reason) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.Code
		if r.Message != "" {
			s[i] += "=" + r.Message
		}
		if r.Path != nil {
			s[i] += "@" + strings.Join(r.Path, "/")
		}
	}
	return strings.Join(s, " ")
}
