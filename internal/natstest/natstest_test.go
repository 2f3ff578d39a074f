package natstest

import "testing"

func TestStartAndConnect(t *testing.T) {
	s := Start(t)
	nc := s.Connect(t)
	if !nc.IsConnected() {
		t.Fatalf("not connected to %s", s.URL)
	}
	if !s.JetStreamEnabled() {
		t.Fatal("JetStream is off")
	}
}

func TestRestartKeepsPortAndData(t *testing.T) {
	s := Start(t)
	url := s.URL
	s.Stop()
	s.Restart(t)
	if s.ClientURL() != url {
		t.Fatalf("restarted at %s, was %s", s.ClientURL(), url)
	}
}
