package web

import (
	"embed"
	"io/fs"
)

//go:embed aweft/*.js demo inspect
var files embed.FS

// Files is the pages and the module: aweft/, demo/ and inspect/.
func Files() fs.FS { return files }
