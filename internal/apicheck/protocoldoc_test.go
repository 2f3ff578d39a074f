package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// protocolDoc is the document for client authors that this file checks.
const protocolDoc = "../../docs/authority-protocol.md"

var (
	fenced = regexp.MustCompile("(?ms)^```.*?^```")
	span   = regexp.MustCompile("`([^`\n]+)`")
	// apiName is Message, Message.field, Message.field.field, Enum.VALUE,
	// Service.Method.
	apiName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	// upperName is an enum value or a gRPC status code.
	upperName = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^[A-Z]{2,}$`)
)

// grpcCodes are the status codes' canonical names, and the health service's
// statuses: the upper-case names the document may use that are not enum
// values of weftgate.v1.
var grpcCodes = map[string]bool{
	"OK": true, "CANCELLED": true, "UNKNOWN": true, "INVALID_ARGUMENT": true, "DEADLINE_EXCEEDED": true,
	"NOT_FOUND": true, "ALREADY_EXISTS": true, "PERMISSION_DENIED": true, "RESOURCE_EXHAUSTED": true,
	"FAILED_PRECONDITION": true, "ABORTED": true, "OUT_OF_RANGE": true, "UNIMPLEMENTED": true,
	"INTERNAL": true, "UNAVAILABLE": true, "DATA_LOSS": true, "UNAUTHENTICATED": true,
	"SERVING": true, "NOT_SERVING": true,
}

// docSpans are the inline code spans of the document, outside fenced blocks.
func docSpans(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range span.FindAllStringSubmatch(fenced.ReplaceAllString(string(b), ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// apiFiles are the descriptors of weftgate/v1.
func apiFiles() []protoreflect.FileDescriptor {
	var out []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage("weftgate.v1", func(f protoreflect.FileDescriptor) bool {
		out = append(out, f)
		return true
	})
	return out
}

// resolve checks one dotted name against the descriptors: a message and
// its fields (a oneof's name counts as a field), following message fields;
// an enum and its values; a service and its methods.
func resolve(name string) string {
	parts := strings.Split(name, ".")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("weftgate.v1." + parts[0]))
	if err != nil && len(parts) == 1 && v1.File_weftgate_v1_gateway_proto.Services().ByName("GatewayService").Methods().ByName(protoreflect.Name(name)) != nil {
		return "" // a method named alone
	}
	if err != nil {
		return parts[0] + " is not a message, enum, service or method of weftgate.v1"
	}
	for _, p := range parts[1:] {
		switch x := d.(type) {
		case protoreflect.MessageDescriptor:
			f := x.Fields().ByName(protoreflect.Name(p))
			if f == nil {
				if x.Oneofs().ByName(protoreflect.Name(p)) != nil {
					return "" // a oneof ends the walk
				}
				return string(x.Name()) + " has no field " + p
			}
			d = f
			if f.Message() != nil {
				d = f.Message()
			}
		case protoreflect.EnumDescriptor:
			if x.Values().ByName(protoreflect.Name(p)) == nil {
				return string(x.Name()) + " has no value " + p
			}
			d = nil
		case protoreflect.ServiceDescriptor:
			if x.Methods().ByName(protoreflect.Name(p)) == nil {
				return string(x.Name()) + " has no method " + p
			}
			d = nil
		default:
			return name + " goes past a scalar field or a value"
		}
	}
	return ""
}

// Every message, field, enum value and method the protocol document names
// exists in gen/, so the document cannot drift from the API unnoticed.
func TestProtocolDocNamesExist(t *testing.T) {
	values := map[string]bool{}
	for _, f := range apiFiles() {
		for i := 0; i < f.Enums().Len(); i++ {
			vs := f.Enums().Get(i).Values()
			for j := 0; j < vs.Len(); j++ {
				values[string(vs.Get(j).Name())] = true
			}
		}
	}
	checked := 0
	for _, s := range docSpans(t) {
		switch {
		case strings.HasPrefix(s, "WEFTGATE_"): // an environment variable
		case upperName.MatchString(s):
			if !values[s] && !grpcCodes[s] {
				t.Errorf("`%s` is neither an enum value of weftgate.v1 nor a gRPC status code", s)
			}
			checked++
		case apiName.MatchString(s):
			if why := resolve(s); why != "" {
				t.Errorf("`%s`: %s", s, why)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d API names found in %s: is it still written with them in code spans?", checked, protocolDoc)
	}
}

// The document names every message and enum of the API, and every value of
// the enums a backend sends or switches on.
func TestProtocolDocIsComplete(t *testing.T) {
	named := map[string]bool{}
	for _, s := range docSpans(t) {
		if apiName.MatchString(s) {
			named[strings.Split(s, ".")[0]] = true
		}
		named[s] = true
	}
	for _, f := range apiFiles() {
		for i := 0; i < f.Messages().Len(); i++ {
			if n := string(f.Messages().Get(i).Name()); !named[n] {
				t.Errorf("the document never names the message %s (%s)", n, f.Path())
			}
		}
		for i := 0; i < f.Enums().Len(); i++ {
			if n := string(f.Enums().Get(i).Name()); !named[n] {
				t.Errorf("the document never names the enum %s (%s)", n, f.Path())
			}
		}
	}
	for _, e := range []protoreflect.EnumDescriptor{
		v1.QuestionKind(0).Descriptor(), v1.CommitView(0).Descriptor(), v1.WithdrawReason(0).Descriptor(),
		v1.WriteStatus(0).Descriptor(), v1.StartPosition(0).Descriptor(), v1.SnapshotReason(0).Descriptor(),
	} {
		for j := 0; j < e.Values().Len(); j++ {
			n := string(e.Values().Get(j).Name())
			if !named[n] && !strings.HasSuffix(n, "_UNSPECIFIED") {
				t.Errorf("the document never names %s.%s", e.Name(), n)
			}
		}
	}
}

// Every reason code the bridge gives (bridge/reasons.go) is in the
// document's table.
func TestProtocolDocListsBridgeReasons(t *testing.T) {
	named := map[string]bool{}
	for _, s := range docSpans(t) {
		named[s] = true
	}
	f, err := parser.ParseFile(token.NewFileSet(), "../../bridge/reasons.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if g, ok := node.(*ast.GenDecl); ok && g.Tok != token.CONST {
			return false // the imports
		}
		lit, ok := node.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		code, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !named[code] {
			t.Errorf("the bridge's reason %q is not in %s", code, protocolDoc)
		}
		return true
	})
	if n < 10 {
		t.Fatalf("only %d reason codes in bridge/reasons.go", n)
	}
}
