package main

import "github.com/weftgate/weftgate/gateway/admission"

// gatewayAdmission turns the per-address rate limit off for the in-process
// gateway: every load peer comes from 127.0.0.1.
func gatewayAdmission() admission.Config { return admission.Config{Limit: -1} }
