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

func TestStartCluster(t *testing.T) {
	ss := StartCluster(t, 3)
	nc := Connect(t, URLs(ss))
	if !nc.IsConnected() || len(nc.Servers()) < 3 {
		t.Fatalf("connected %v to %v", nc.IsConnected(), nc.Servers())
	}
}
