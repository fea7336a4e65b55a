export * from './errors';
export * from './pagination';
export * from './listings';
export * from './studio';
export * from './uploads';
export * from './retrieval';
export * from './credentials';
export * from './evaluation';
