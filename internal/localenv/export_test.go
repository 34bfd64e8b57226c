package localenv

// Reserve lets the external tests hold a port from a helper process.
var Reserve = reserve
