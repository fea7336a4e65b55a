import type { Root, RootContent } from 'mdast';
import type { Section } from '../types';
import { blockText } from './markdownText';

interface OpenSection {
  /** Heading path, outermost first, with depths to work out nesting. */
  path: { depth: number; text: string }[];
  blocks: string[];
  /** Whether anything but heading lines was added. */
  hasBody: boolean;
}

/**
 * One section per top-level heading, with metadata `{ headings: ['H1', 'H2'] }` (the heading path; absent
 * for text before the first heading). The heading line starts the section text. A heading directly
 * followed by a deeper one ("# Guide" then "## Install") has no body of its own: its line is carried
 * into the deeper section's text, so it is neither lost nor left as a one-word section.
 */
export function markdownSections(tree: Root): Section[] {
  const builder = new MarkdownSectionBuilder();
  builder.add(tree.children);
  return builder.finish();
}

/**
 * markdownSections fed a document's top-level nodes a part at a time, so the tree of each part of a
 * large document can be dropped once its text is taken (the whole tree costs 15–20 times the file).
 */
export class MarkdownSectionBuilder {
  private readonly sections: Section[] = [];
  private current: OpenSection = { path: [], blocks: [], hasBody: false };

  add(nodes: RootContent[]): void {
    for (const node of nodes) {
      if (node.type !== 'heading') {
        const text = blockText(node);
        if (text !== '') {
          this.current.blocks.push(text);
          this.current.hasBody = true;
        }
        continue;
      }
      const text = blockText(node);
      const path = [
        ...this.current.path.filter((heading) => heading.depth < node.depth),
        { depth: node.depth, text },
      ];
      const deepest = this.current.path.at(-1);
      const carried =
        !this.current.hasBody && deepest !== undefined && node.depth > deepest.depth
          ? this.current.blocks
          : [];
      if (carried.length === 0) this.emit(this.current);
      this.current = { path, blocks: text === '' ? [...carried] : [...carried, text], hasBody: false };
    }
  }

  finish(): Section[] {
    this.emit(this.current);
    this.current = { path: [], blocks: [], hasBody: false };
    return this.sections;
  }

  private emit(section: OpenSection): void {
    if (section.blocks.length === 0) return;
    const headings = section.path.map((heading) => heading.text).filter((text) => text !== '');
    this.sections.push({
      text: section.blocks.join('\n\n'),
      metadata: headings.length > 0 ? { headings } : {},
    });
  }
}
