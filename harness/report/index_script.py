"""results/index.html's script: filters, the count line and paging over the runs, with the
choice kept in the URL's fragment so that a reload, a bookmark or a link shows the same."""

from __future__ import annotations

DEFAULT_PER_PAGE = "100"
PER_PAGE_CHOICES = ("50", "100", "200", "all")
OTHER_WORDS = (("INCOMPLETE", "INCOMPLETE"), ("UNKNOWN", "UNKNOWN"), ("NONE", "without a verdict"))
"""After "N of M INVALID" the count line names these verdicts, when any run has one."""

SCRIPT = """
const FILTERS=[...document.querySelectorAll('select[data-filter]')];
const ROWS=[...document.querySelectorAll('tr.run')];
const GROUPS=[...document.querySelectorAll('details.group')];
const SEARCH=document.getElementById('q'), PER=document.getElementById('per');
let page=1;
function readUrl(){
  // The fragment first (what this page writes); a query string for hand-made links.
  const text=location.hash.length>1?location.hash.slice(1):location.search.slice(1);
  const p=new URLSearchParams(text);
  FILTERS.forEach(s=>{
    const v=p.get(s.dataset.filter)||'';
    if(v&&![...s.options].some(o=>o.value===v)){s.add(new Option(v,v));}
    s.value=v;
  });
  SEARCH.value=p.get('q')||'';
  PER.value=PER_CHOICES.includes(p.get('per'))?p.get('per'):DEFAULT_PER;
  page=Math.max(1,parseInt(p.get('page')||'1',10)||1);
}
function writeUrl(){
  const p=new URLSearchParams();
  FILTERS.forEach(s=>{if(s.value){p.set(s.dataset.filter,s.value);}});
  if(SEARCH.value){p.set('q',SEARCH.value);}
  if(PER.value!==DEFAULT_PER){p.set('per',PER.value);}
  if(page>1){p.set('page',String(page));}
  const hash=p.toString();
  history.replaceState(null,'',location.pathname+(hash?'#'+hash:''));
}
function matches(r,q){
  return FILTERS.every(s=>{
    const v=s.value, have=r.dataset[s.dataset.filter]||'';
    if(!v){return true;}
    return s.dataset.filter==='nemesis'?have.split(',').includes(v):have===v;
  })&&(!q||r.textContent.toLowerCase().includes(q));
}
function countLine(hit){
  const n={};
  hit.forEach(r=>{n[r.dataset.verdict]=(n[r.dataset.verdict]||0)+1;});
  let text=(n.INVALID||0)+' of '+hit.length+' INVALID';
  OTHER_WORDS.forEach(([w,said])=>{if(n[w]){text+=', '+n[w]+' '+said;}});
  return text;
}
function apply(){
  const q=SEARCH.value.trim().toLowerCase();
  const hit=ROWS.filter(r=>matches(r,q));
  const per=PER.value==='all'?Math.max(1,hit.length):parseInt(PER.value,10);
  const pages=Math.max(1,Math.ceil(hit.length/per));
  page=Math.min(page,pages);
  const shown=new Set(hit.slice((page-1)*per,page*per));
  ROWS.forEach(r=>{r.hidden=!shown.has(r);});
  GROUPS.forEach(g=>{
    const n=[...g.querySelectorAll('tr.run')].filter(r=>shown.has(r)).length;
    g.hidden=n===0;
    g.querySelector('.shown').textContent=n;
  });
  document.getElementById('count').textContent=countLine(hit);
  document.getElementById('none').hidden=hit.length>0;
  document.getElementById('page').textContent='page '+page+' of '+pages;
  document.getElementById('prev').disabled=page<=1;
  document.getElementById('next').disabled=page>=pages;
  writeUrl();
}
function refilter(){page=1;apply();}
FILTERS.forEach(s=>s.addEventListener('change',refilter));
SEARCH.addEventListener('input',refilter);
PER.addEventListener('change',refilter);
document.getElementById('prev').addEventListener('click',()=>{page--;apply();});
document.getElementById('next').addEventListener('click',()=>{page++;apply();});
document.getElementById('open').addEventListener('click',()=>GROUPS.forEach(g=>{g.open=true;}));
document.getElementById('shut').addEventListener('click',()=>GROUPS.forEach(g=>{g.open=false;}));
window.addEventListener('hashchange',()=>{readUrl();apply();});
readUrl();
apply();
"""


def script() -> str:
    """Returns the page's script with its constants filled in."""
    pairs = ",".join(f"['{word}','{said}']" for word, said in OTHER_WORDS)
    choices = ",".join(f"'{c}'" for c in PER_PAGE_CHOICES)
    constants = (
        f"const DEFAULT_PER='{DEFAULT_PER_PAGE}';const PER_CHOICES=[{choices}];"
        f"const OTHER_WORDS=[{pairs}];"
    )
    return constants + SCRIPT
