package admission

import (
	"context"
	"testing"
)

func TestOriginRule(t *testing.T) {
	allow := []string{"https://app.example.com", "http://localhost:5173/", "not a url"}
	cases := []struct {
		name    string
		host    string
		origins []string // Origin headers, none for no header
		list    []string
		ok      bool
	}{
		{"no origin", "app.test", nil, nil, true},
		{"same host", "app.test", []string{"http://app.test"}, nil, true},
		{"same host other scheme", "app.test", []string{"https://app.test"}, nil, true},
		{"same host case", "App.Test", []string{"http://APP.test"}, nil, true},
		{"same host and port", "app.test:8080", []string{"http://app.test:8080"}, nil, true},
		{"other host", "app.test", []string{"http://evil.test"}, nil, false},
		{"subdomain", "app.test", []string{"http://x.app.test"}, nil, false},
		{"other port", "app.test:8080", []string{"http://app.test:9090"}, nil, false},
		{"port missing", "app.test:8080", []string{"http://app.test"}, nil, false},
		{"allow-listed", "gw.test", []string{"https://app.example.com"}, allow, true},
		{"allow-listed with trailing slash in config", "gw.test", []string{"http://localhost:5173"}, allow, true},
		{"allow-list is exact about scheme", "gw.test", []string{"http://app.example.com"}, allow, false},
		{"allow-list is exact about port", "gw.test", []string{"https://app.example.com:444"}, allow, false},
		{"not on the list", "gw.test", []string{"https://other.example.com"}, allow, false},
		{"any", "gw.test", []string{"https://anything.test"}, []string{"any"}, true},
		{"any passes null", "gw.test", []string{"null"}, []string{"any"}, true},
		{"any among others is not any", "gw.test", []string{"https://anything.test"}, []string{"any", "https://a.test"}, false},
		{"null", "app.test", []string{"null"}, nil, false},
		{"empty", "app.test", []string{""}, nil, false},
		{"two origins", "app.test", []string{"http://app.test", "http://app.test"}, nil, false},
		{"path", "app.test", []string{"http://app.test/x"}, nil, false},
		{"trailing slash", "app.test", []string{"http://app.test/"}, nil, false},
		{"query", "app.test", []string{"http://app.test?x"}, nil, false},
		{"fragment", "app.test", []string{"http://app.test#x"}, nil, false},
		{"userinfo", "app.test", []string{"http://u@app.test"}, nil, false},
		{"no scheme", "app.test", []string{"app.test"}, nil, false},
		{"garbage", "app.test", []string{"%%%"}, nil, false},
		{"opaque", "app.test", []string{"mailto:app.test"}, nil, false},
		{"empty port", "app.test", []string{"http://app.test:"}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			identified := false
			g := New(Config{AllowedOrigins: c.list, Identifier: IdentifierFunc(func(context.Context, Peer) (Identity, error) {
				identified = true
				return Identity{Anonymous: true}, nil
			})})
			r := handshake("192.0.2.1:1", "")
			r.Host = c.host
			for _, o := range c.origins {
				r.Header.Add("Origin", o)
			}
			_, ok, res, body := admit(t, g, r)
			if c.ok {
				if !ok {
					t.Fatalf("refused: %d %s", res.StatusCode, body)
				}
				return
			}
			wantRefused(t, ok, res, body, 403, bodyOrigin)
			if identified {
				t.Fatal("identifier ran for a refused origin")
			}
		})
	}
}

func TestValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{AllowedOrigins: []string{"any"}}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{AllowedOrigins: []string{"https://a.test", "http://b.test:81/"}}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := (Config{AllowedOrigins: []string{"https://a.test", "a.test/x"}}).Validate()
	ce, ok := err.(*ConfigError)
	if !ok || ce.Field != "AllowedOrigins" || ce.Value != "a.test/x" {
		t.Fatalf("err %v", err)
	}
}
