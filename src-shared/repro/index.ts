// Reproductions as files (issue 12): the versioned format, its parser and the expectations checker.
export * from './types';
export * from './parse';
export * from './check';
export * from './picture';
