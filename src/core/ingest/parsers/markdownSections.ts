import type { Root } from 'mdast';
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
  const sections: Section[] = [];
  let current: OpenSection = { path: [], blocks: [], hasBody: false };
  const emit = (section: OpenSection) => {
    if (section.blocks.length === 0) return;
    const headings = section.path.map((heading) => heading.text).filter((text) => text !== '');
    sections.push({ text: section.blocks.join('\n\n'), metadata: headings.length > 0 ? { headings } : {} });
  };

  for (const node of tree.children) {
    if (node.type !== 'heading') {
      const text = blockText(node);
      if (text !== '') {
        current.blocks.push(text);
        current.hasBody = true;
      }
      continue;
    }
    const text = blockText(node);
    const path = [
      ...current.path.filter((heading) => heading.depth < node.depth),
      { depth: node.depth, text },
    ];
    const deepest = current.path.at(-1);
    const carried =
      !current.hasBody && deepest !== undefined && node.depth > deepest.depth ? current.blocks : [];
    if (carried.length === 0) emit(current);
    current = { path, blocks: text === '' ? [...carried] : [...carried, text], hasBody: false };
  }
  emit(current);
  return sections;
}
