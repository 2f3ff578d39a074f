// Package admission is the gateway's door: the checks a request passes before
// a WebSocket upgrade, in the order the aweft JS server applies them (client
// notes section 2):
//
//  1. a rate limit per peer address (429, reason "limit", with Retry-After);
//  2. the Host rule, when the gateway listens on loopback only (403, reason
//     "host"): against DNS rebinding, only loopback names and an allow-list;
//  3. the Origin rule (403, reason "origin");
//  4. identification through an Identifier (401 with the identifier's
//     reasons when it refuses; 500, reason "identify-failed", when it fails).
//
// A refused request gets a plain HTTP answer with the JSON body
// {"reasons":[{"code":"...","message":"..."}]} and is never upgraded.
//
// The package does not upgrade sockets, read the session cookie (an
// Identifier does), sign anyone in, or log: it never sees a reason to write a
// cookie or token anywhere. It reads time only through Config.Now.
package admission
