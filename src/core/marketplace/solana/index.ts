export * from './accounts';
export * from './client';
export * from './codec';
export * from './errors';
export * from './idl';
export * from './instructions';
export * from './pda';
export * from './rejections';
