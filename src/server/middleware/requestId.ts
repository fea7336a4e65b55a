import type { RequestHandler } from 'express';
import { randomBase62 } from '../../core/ids';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
  }
}

/** Every response carries X-Request-Id; error bodies repeat it so a user can quote it. */
export const requestId: RequestHandler = (req, res, next) => {
  req.id = `req_${randomBase62(20)}`;
  res.setHeader('X-Request-Id', req.id);
  next();
};
