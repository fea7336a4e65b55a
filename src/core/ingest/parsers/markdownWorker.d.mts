/** Whether GFM autolink literals could change the text of a Markdown piece (markdownWorker.mjs). */
export declare function autolinksMatter(text: string): boolean;
