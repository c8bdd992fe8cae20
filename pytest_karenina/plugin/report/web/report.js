/* pytest-karenina: the results table of pytest-html's report, drawn a page at a time, with
 * karenina's filters (outcome category, answering model, flaky, models disagree, a search).
 *
 * pytest-html's own script draws every row of its table again whenever anything changes (a
 * sort, an outcome box, a click that expands one row): at 20,000 items that takes tens of
 * seconds. This script runs before pytest-html's (it sits in the summary, above the footer
 * that holds pytest-html's data and script): it takes the rows out of pytest-html's data as
 * the parser inserts them, so pytest-html draws an empty table, keeps them, and draws the rows
 * that pass the filters, a page at a time (the next page when the reader scrolls near the
 * end). pytest-html's outcome boxes, sortable headers and show/hide-all buttons keep working:
 * their clicks are handled here. One listener per kind of event, none per row; a filter is
 * one pass over the rows. Were the rows not found (another pytest-html layout), pytest-html
 * draws its table as usual and the filter bar stays hidden.
 */
;(() => {
  'use strict'
  const PAGE = 100
  const RESULT_ORDER = ['error', 'failed', 'rerun', 'xfailed', 'xpassed', 'skipped', 'passed']
  const ENTITIES = {
    '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'",
    '&#10;': '\n',
  }
  const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' }
  const unescape = (text) => text.replace(/&(?:amp|lt|gt|quot|#x27|#39|#10);/g, (e) => ENTITIES[e])
  const escape = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c])
  const nodeOf = (testId) => testId.replace(/::(setup|teardown)$/, '')

  const configNode = document.getElementById('karenina-report-config')
  const config = configNode ? JSON.parse(configNode.textContent) : {}
  const disagree = Array.isArray(config.disagree) ? new Set(config.disagree) : null

  // 1. Take the rows before pytest-html's script reads its data.
  let data = null
  const watcher = new MutationObserver(() => {
    const container = document.getElementById('data-container')
    if (!container) return
    watcher.disconnect()
    try {
      const found = JSON.parse(container.dataset.jsonblob)
      if (found && found.tests && typeof found.tests === 'object') {
        container.dataset.jsonblob = JSON.stringify({ ...found, tests: {} })
        data = found
      }
    } catch (error) {
      data = null
    }
  })
  watcher.observe(document.documentElement, { childList: true, subtree: true })

  const state = {
    outcomes: null, categories: new Set(), models: new Set(), flaky: false, disagree: false,
    terms: [], sort: 'result', ascending: false,
  }
  let rows = [] // every row, in the order of the current sort
  let matching = [] // the rows the filters let through, in that order
  let drawn = 0
  let table = null
  let columns = 1
  let status = null
  const byId = new Map()
  const more = new IntersectionObserver((seen) => {
    if (seen.some((entry) => entry.isIntersecting)) drawPage()
  }, { rootMargin: '600px' })

  function prepare(test, index, collapsed) {
    const result = String(test.result || '').toLowerCase()
    return {
      test, index, id: `test_${index}`, result,
      category: unescape(test.kverdict || ''),
      model: unescape(test.kmodel || ''),
      flaky: Boolean(test.kflaky),
      disagree: disagree !== null && disagree.has(nodeOf(String(test.testId))),
      collapsed: collapsed === true || collapsed.has(result),
      text: null,
    }
  }

  function searchText(row) {
    const test = row.test
    let html = `${test.testId} ${test.resultsTableRow.join(' ')}`
    for (const extra of test.extras || []) {
      if (extra.format_type === 'html') html += ` ${extra.content}`
    }
    // A cut question or reason is whole in its title attribute.
    const text = html.replace(/<[^>]*?\btitle="([^"]*)"[^>]*>|<[^>]*>/g, (tag, title) =>
      title ? ` ${title} ` : ' ')
    return unescape(text).toLowerCase()
  }

  function admits(row) {
    if (state.outcomes !== null && state.outcomes.known.has(row.result) &&
        !state.outcomes.shown.has(row.result)) return false
    if (row.category && state.categories.has(row.category)) return false
    if (row.model && state.models.has(row.model)) return false
    if (state.flaky && !row.flaky) return false
    if (state.disagree && !row.disagree) return false
    if (state.terms.length) {
      if (row.text === null) row.text = searchText(row)
      for (const term of state.terms) if (!row.text.includes(term)) return false
    }
    return true
  }

  // 2. Drawing: one page of rows as one piece of HTML.
  function extrasRow(row) {
    const test = row.test
    let html = ''
    let media = ''
    for (const extra of test.extras || []) {
      const source = escape(extra.content || '')
      if (extra.format_type === 'html') html += `<div>${extra.content}</div>`
      else if (extra.format_type === 'image') {
        media += `<a href="${source}" target="_blank"><img src="${source}" alt="${escape(extra.name || '')}"></a>`
      } else if (extra.format_type === 'video') media += `<video controls src="${source}"></video>`
    }
    for (const item of test.tableHtml || []) html += item
    const log = test.log && test.log.trim()
      ? '<div class="logwrapper"><div class="logexpander"></div><div class="log">' +
        test.log.replace(/^E.*$/gm, (line) => `<span class="error">${line}</span>`) + '</div></div>'
      : ''
    return `<tr class="extras-row${row.collapsed ? ' hidden' : ''}"><td class="extra" colspan="${columns}">` +
      `<div class="extraHTML">${html}</div>` +
      (media ? `<div class="karenina-media">${media}</div>` : '') + `${log}</td></tr>`
  }

  function rowHtml(row) {
    const test = row.test
    let cells = test.resultsTableRow.join('')
    if (row.collapsed) cells = cells.replace('class="col-result"', 'class="col-result collapsed"')
    return `<tbody class="results-table-row ${escape(row.result)}" id="${escape(test.testId)}">` +
      `<tr class="collapsible" data-id="${row.id}">${cells}</tr>${extrasRow(row)}</tbody>`
  }

  function drawPage() {
    more.disconnect()
    table.querySelector('tbody.karenina-more')?.remove()
    const page = matching.slice(drawn, drawn + PAGE)
    drawn += page.length
    let html = page.map(rowHtml).join('')
    const left = matching.length - drawn
    if (left > 0) {
      html += `<tbody class="karenina-more"><tr><td colspan="${columns}">` +
        `<button type="button">show ${Math.min(left, PAGE)} more of the ${left} left</button>` +
        '</td></tr></tbody>'
    }
    const template = document.createElement('template')
    template.innerHTML = html
    table.append(template.content)
    const next = table.querySelector('tbody.karenina-more')
    if (next) more.observe(next)
  }

  function draw() {
    table = document.getElementById('results-table')
    columns = table.tHead ? table.tHead.rows[0].cells.length : 1
    for (const body of [...table.tBodies]) body.remove()
    drawn = 0
    if (matching.length) {
      drawPage()
    } else {
      const empty = document.getElementById('template_results-table__body--empty')
      if (empty) table.append(empty.content.cloneNode(true))
    }
  }

  function refresh() {
    matching = rows.filter(admits)
    draw()
    status.textContent = `${matching.length} of ${rows.length} items match`
  }

  // 3. Sorting, as pytest-html sorts (its arrows, its order of outcomes).
  const duration = (text) => {
    const value = String(text || '')
    if (!value.includes(':')) return parseFloat(value) || 0
    const [hours, minutes, seconds] = value.split(':').map(Number)
    return (hours * 3600 + minutes * 60 + seconds) * 1000
  }

  function sort(type) {
    let key = (row) => row.test[type] ?? ''
    if (type === 'result') key = (row) => RESULT_ORDER.indexOf(row.result)
    else if (type === 'duration') key = (row) => duration(row.test.duration)
    else if (type === 'original') key = (row) => row.index
    const keyed = rows.map((row) => [key(row), row])
    keyed.sort((a, b) => (a[0] === b[0] ? a[1].index - b[1].index : a[0] > b[0] ? 1 : -1))
    rows = keyed.map((pair) => pair[1])
    if (state.ascending) rows.reverse()
    for (const header of document.querySelectorAll('#results-table-head .sortable')) {
      header.classList.remove('asc', 'desc')
      if (header.dataset.columnType === type) header.classList.add(state.ascending ? 'desc' : 'asc')
    }
  }

  // 4. The filter bar and the events (one listener each, delegated).
  function checkbox(name, value, label, count) {
    const box = document.createElement('label')
    const input = document.createElement('input')
    input.type = 'checkbox'
    input.dataset[name] = value
    input.checked = name !== 'kflag'
    input.disabled = count === 0
    const counted = document.createElement('span')
    counted.className = 'karenina-count'
    counted.textContent = ` ${count}`
    box.append(input, ` ${label}`, counted)
    return box
  }

  function group(title, boxes) {
    const found = document.createElement('span')
    found.className = 'karenina-filter-group'
    const heading = document.createElement('strong')
    heading.textContent = `${title} `
    found.append(heading, ...boxes)
    return found
  }

  function buildBar(bar) {
    const categories = new Map()
    const models = new Map()
    let flaky = 0
    let split = 0
    for (const row of rows) {
      if (row.category) categories.set(row.category, (categories.get(row.category) || 0) + 1)
      if (row.model) models.set(row.model, (models.get(row.model) || 0) + 1)
      flaky += row.flaky
      split += row.disagree
    }
    const boxes = (name, counts) => [...counts.keys()].sort().map(
      (value) => checkbox(name, value, value, counts.get(value)))
    const flags = [checkbox('kflag', 'flaky', 'flaky', flaky)]
    if (disagree !== null) flags.push(checkbox('kflag', 'disagree', 'models disagree', split))
    const search = document.createElement('input')
    search.type = 'search'
    search.placeholder = 'search question, answer, reason'
    search.setAttribute('aria-label', 'search the question, the answer and the reason')
    status = document.createElement('span')
    status.className = 'karenina-status'
    bar.replaceChildren(
      group('Outcome', boxes('kcategory', categories)), group('Model', boxes('kmodel', models)),
      group('Only', flags), search, status)
    bar.hidden = false
    bar.addEventListener('change', (event) => {
      const input = event.target
      if (input.type !== 'checkbox') return
      const { kcategory, kmodel, kflag } = input.dataset
      const toggle = (set, value) => (input.checked ? set.delete(value) : set.add(value))
      if (kcategory !== undefined) toggle(state.categories, kcategory)
      else if (kmodel !== undefined) toggle(state.models, kmodel)
      else if (kflag === 'flaky') state.flaky = input.checked
      else if (kflag === 'disagree') state.disagree = input.checked
      refresh()
    })
    bar.addEventListener('input', (event) => {
      if (event.target.type !== 'search') return
      state.terms = event.target.value.toLowerCase().split(/\s+/).filter(Boolean)
      refresh()
    })
  }

  function outcomes() {
    const shown = new Set()
    const known = new Set()
    for (const input of document.querySelectorAll('input[name="filter_checkbox"]')) {
      known.add(input.dataset.testResult)
      if (input.checked) shown.add(input.dataset.testResult)
    }
    return { shown, known }
  }

  // pytest-html's controls: handled here, before pytest-html's own listeners would redraw.
  function onControl(event) {
    const target = event.target
    if (!(target instanceof Element)) return
    const header = target.closest('#results-table-head .sortable')
    const jump = target.closest('.karenina-cluster a[href^="#"]')
    if (jump && table) {
      // A failure cluster's item: draw pages until its row exists; the link then scrolls.
      const id = decodeURIComponent(jump.getAttribute('href').slice(1))
      while (!document.getElementById(id) && drawn < matching.length) drawPage()
    } else if (target.matches('input[name="filter_checkbox"]')) {
      event.stopPropagation()
      state.outcomes = outcomes()
      refresh()
    } else if (header) {
      event.stopPropagation()
      const type = header.dataset.columnType
      state.ascending = state.sort === type ? !state.ascending : false
      state.sort = type
      sort(type)
      refresh()
    } else if (target.id === 'show_all_details' || target.id === 'hide_all_details') {
      event.stopPropagation()
      for (const row of rows) row.collapsed = target.id === 'hide_all_details'
      draw()
    }
  }

  function onTable(event) {
    const target = event.target
    if (!(target instanceof Element) || !table || !table.contains(target)) return
    if (target.closest('tbody.karenina-more button')) return drawPage()
    const expander = target.closest('.logexpander')
    if (expander) return expander.parentElement.classList.toggle('expanded')
    const cell = target.closest('tr.collapsible > td')
    const row = cell && byId.get(cell.parentElement.dataset.id)
    if (!row || cell.classList.contains('col-links')) return
    row.collapsed = !row.collapsed
    const body = cell.closest('tbody')
    body.querySelector('.extras-row')?.classList.toggle('hidden', row.collapsed)
    body.querySelector('.col-result')?.classList.toggle('collapsed', row.collapsed)
  }

  function start() {
    watcher.disconnect()
    const bar = document.getElementById('karenina-filters')
    if (data === null || bar === null || !document.getElementById('results-table')) return
    const setting = data.renderCollapsed || ['passed']
    const collapsed = setting.includes('all') || new Set(setting.map((s) => s.toLowerCase()))
    rows = Object.values(data.tests).flat().map((test, index) => prepare(test, index, collapsed))
    for (const row of rows) byId.set(row.id, row)
    state.sort = new URLSearchParams(location.search).get('sort') || data.initialSort || 'result'
    data = null
    try {
      state.ascending = JSON.parse(sessionStorage.getItem('sortAsc')) || false
    } catch (error) {
      state.ascending = false
    }
    state.outcomes = outcomes()
    buildBar(bar)
    if (state.sort !== 'original') sort(state.sort)
    document.addEventListener('click', onControl, true)
    document.addEventListener('click', onTable)
    // Should pytest-html draw its table again after all, draw the rows into the new one.
    new MutationObserver(() => {
      if (document.getElementById('results-table') !== table) draw()
    }).observe(document.body, { childList: true })
    refresh()
  }

  document.addEventListener('DOMContentLoaded', start)
})()
