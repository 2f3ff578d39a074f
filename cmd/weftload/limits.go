package main

import (
	"fmt"
	"net"
	"net/url"
	"syscall"
)

// raiseFileLimit lifts the soft open-file limit to the hard one (thousands
// of links need a descriptor each, two each with -inprocess) and returns
// the limit in force.
func raiseFileLimit() uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
			syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
		}
	}
	return l.Cur
}

// loopbackOnly refuses to load anything but this machine: this workplace
// forbids sending load off the machine, and a load tool pointed at someone
// else's gateway by a typo is a denial of service.
func loopbackOnly(flag, raw string, allow bool) error {
	if allow {
		return nil
	}
	host := raw
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		host = u.Hostname()
	} else if h, _, err := net.SplitHostPort(raw); err == nil {
		host = h
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s %s is not loopback; load tests target this machine only (-allow-remote to override)", flag, raw)
}
