package cronspec

// The tests load zones whether or not the machine has a zoneinfo
// database, as the functions that read zones do.
import _ "time/tzdata"
