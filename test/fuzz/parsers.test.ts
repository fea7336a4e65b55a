import { describeParserFuzzing } from './suite';

describeParserFuzzing(false);
