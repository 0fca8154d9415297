// The media layer's public value types (time, geometry, errors, tracks, byte sources) are part of
// Playhead's API: an app imports Playhead alone. Its `package` owners stay inside this package.
@_exported public import PlayheadMedia
